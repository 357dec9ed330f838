// smoke_ioredis.js - a short smoke test of ioredis (Node) against the server
// on 127.0.0.1:$ATTIC_TEST_PORT: SET/GET (with EX, binary values), a
// pipeline of 300 commands (replies in order), MULTI/EXEC, WATCH aborted by
// another connection, EXPIRE until the key is gone, another database, QUIT.
// ioredis 6 opens each connection with HELLO 3 and INFO (its ready check),
// so this also runs these commands' RESP3 replies; ioredis 5 stays on RESP2.
// Run by tests/integration/node_clients.sh, which starts the server; it
// exits 77 here too if ioredis cannot be resolved. Every connection has
// connect and command timeouts, and a watchdog ends the run after 60 s.
'use strict';

let Redis;
try {
    Redis = require('ioredis');
} catch (e) {
    console.log('SKIP: the ioredis module cannot be resolved (npm install ioredis in ' +
                'tests/integration/clients, or set NODE_PATH): ' + e.message.split('\n')[0]);
    process.exit(77);
}

const port = parseInt(process.env.ATTIC_TEST_PORT || '', 10);
if (!port) {
    console.error('smoke_ioredis: set ATTIC_TEST_PORT');
    process.exit(2);
}

const watchdog = setTimeout(() => {
    console.error('FAIL: smoke_ioredis: no result after 60 s');
    process.exit(1);
}, 60000);

const clients = [];
function connect(opts) {
    const c = new Redis(Object.assign({
        host: '127.0.0.1',
        port,
        connectTimeout: 5000,
        commandTimeout: 10000,
        maxRetriesPerRequest: 1,
        retryStrategy: () => null, // no reconnection loops: fail instead
        lazyConnect: false,
    }, opts || {}));
    c.on('error', () => {}); // reported through the commands' rejections
    clients.push(c);
    return c;
}

let checks = 0;
function eq(what, got, want) {
    const g = JSON.stringify(got), w = JSON.stringify(want);
    if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
    checks++;
}
function ok(what, cond, detail) {
    if (!cond) throw new Error(`${what}: ${detail === undefined ? 'false' : detail}`);
    checks++;
}

async function main() {
    const r = connect();
    const other = connect();
    eq('PING', await r.ping(), 'PONG');
    eq('FLUSHALL', await r.flushall(), 'OK');

    // set / get
    eq('SET', await r.set('greeting', 'hello'), 'OK');
    eq('GET', await r.get('greeting'), 'hello');
    eq('GET missing', await r.get('nope'), null);
    eq('SET EX', await r.set('tmp', 'v', 'EX', 100), 'OK');
    const ttl = await r.ttl('tmp');
    ok('TTL after SET EX 100', ttl >= 99 && ttl <= 100, ttl);
    eq('SET NX on existing', await r.set('greeting', 'x', 'NX'), null);
    const bin = Buffer.from([0, 13, 10, 255, 1, 2]);
    eq('SET binary', await r.set('bin', bin), 'OK');
    eq('GET binary', (await r.getBuffer('bin')).toString('hex'), bin.toString('hex'));
    const big = 'x'.repeat(5000);
    eq('SET 5000 bytes', await r.set('big', big), 'OK');
    eq('STRLEN', await r.strlen('big'), 5000);
    eq('GET 5000 bytes', await r.get('big'), big);
    eq('INCR', await r.incr('n'), 1);
    eq('INCRBY', await r.incrby('n', 41), 42);
    eq('MGET', await r.mget('greeting', 'nope', 'n'), ['hello', null, '42']);

    // a pipeline: 300 commands, replies in order
    const p = r.pipeline();
    const want = [];
    for (let i = 0; i < 100; i++) {
        p.set(`p:${i}`, `v${i}`); want.push([null, 'OK']);
        p.incr('pctr'); want.push([null, i + 1]);
        p.get(`p:${i}`); want.push([null, `v${i}`]);
    }
    eq('pipeline of 300', await p.exec(), want);
    eq('DBSIZE', await r.dbsize(), 106);

    // MULTI / EXEC, and an error inside it
    eq('MULTI/EXEC', await r.multi().set('m', '1').incr('m').get('m').exec(),
       [[null, 'OK'], [null, 2], [null, '2']]);
    const res = await r.multi().set('s', 'abc').incr('s').set('t', 'y').exec();
    ok('EXEC with a runtime error', res.length === 3 && res[0][1] === 'OK' && res[1][0] instanceof Error &&
       /not an integer/.test(res[1][0].message) && res[2][1] === 'OK', JSON.stringify(res));

    // WATCH: a change by another connection aborts EXEC (null result)
    const w = connect();
    eq('SET w', await w.set('w', '0'), 'OK');
    eq('WATCH', await w.watch('w'), 'OK');
    eq('other SET w', await other.set('w', 'changed'), 'OK');
    eq('EXEC after a watched change', await w.multi().set('w', 'mine').exec(), null);
    eq('GET w', await r.get('w'), 'changed');
    eq('WATCH again', await w.watch('w'), 'OK');
    eq('EXEC, no change', await w.multi().set('w', 'mine').exec(), [[null, 'OK']]);
    eq('GET w after EXEC', await r.get('w'), 'mine');

    // EXPIRE: TTL, then a short PEXPIRE really removes the key
    eq('EXPIRE', await r.expire('greeting', 100), 1);
    const t2 = await r.ttl('greeting');
    ok('TTL after EXPIRE 100', t2 >= 99 && t2 <= 100, t2);
    eq('PERSIST', await r.persist('greeting'), 1);
    eq('TTL after PERSIST', await r.ttl('greeting'), -1);
    eq('PEXPIRE 100', await r.pexpire('greeting', 100), 1);
    const deadline = Date.now() + 10000;
    while ((await r.exists('greeting')) === 1 && Date.now() < deadline)
        await new Promise((res2) => setTimeout(res2, 50));
    eq('expired key', await r.get('greeting'), null);
    eq('TTL of expired key', await r.ttl('greeting'), -2);

    // another database
    const d3 = connect({ db: 3 });
    eq('SET in db 3', await d3.set('k', 'three'), 'OK');
    eq('GET in db 0', await r.get('k'), null);
    eq('SELECT 3', await r.select(3), 'OK');
    eq('GET after SELECT 3', await r.get('k'), 'three');

    // QUIT
    eq('QUIT', await r.quit(), 'OK');
    for (const c of clients) if (c !== r) await c.quit();
    let version = '?';
    try { version = require('ioredis/package.json').version; } catch (e) { /* exports may hide it */ }
    console.log(`smoke_ioredis: ${checks} checks passed (ioredis ${version})`);
}

main().then(() => {
    clearTimeout(watchdog);
    process.exit(0);
}, (err) => {
    console.log('FAIL: smoke_ioredis: ' + (err && err.stack ? err.stack : err));
    for (const c of clients) c.disconnect();
    clearTimeout(watchdog);
    process.exit(1);
});
