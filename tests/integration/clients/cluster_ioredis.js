// cluster_ioredis.js - ioredis's Cluster client across AtticDB's cluster mode
// (issue 16 item 4, D35): started with one node's port, it must learn the
// topology (CLUSTER SLOTS), send each key to the node its slot names, follow
// -MOVED when asked the wrong node, and run a pipeline and a MULTI whose keys
// share a hash tag. Prints one line per key, "key port", for the caller
// (tests/integration/clients/test_sharding.py) to check against the
// topology file; exits 0 when every reply was right, 77 when ioredis cannot
// be resolved, 1 otherwise. Ports of the three nodes: $ATTIC_CLUSTER_PORTS
// (comma-separated). A watchdog ends the run after 60 s.
'use strict';

let Redis;
try {
    Redis = require('ioredis');
} catch (e) {
    console.log('SKIP: the ioredis module cannot be resolved: ' + e.message.split('\n')[0]);
    process.exit(77);
}

const ports = (process.env.ATTIC_CLUSTER_PORTS || '').split(',').map(Number).filter(Boolean);
if (ports.length !== 3) {
    console.error('cluster_ioredis: set ATTIC_CLUSTER_PORTS to three ports');
    process.exit(2);
}

const watchdog = setTimeout(() => {
    console.error('FAIL: cluster_ioredis: no result after 60 s');
    process.exit(1);
}, 60000);

function fail(what) {
    console.error('FAIL: cluster_ioredis: ' + what);
    process.exit(1);
}

function eq(got, want, what) {
    if (JSON.stringify(got) !== JSON.stringify(want))
        fail(what + ': got ' + JSON.stringify(got) + ', want ' + JSON.stringify(want));
}

async function main() {
    const opts = {connectTimeout: 5000, commandTimeout: 10000, maxRetriesPerRequest: 1};
    const cluster = new Redis.Cluster([{host: '127.0.0.1', port: ports[0]}], {
        redisOptions: opts,
        clusterRetryStrategy: () => null,
        slotsRefreshTimeout: 5000,
    });
    const keys = [];
    for (let i = 0; i < 200; i++)
        keys.push('node:' + i);
    for (const k of keys)
        eq(await cluster.set(k, k.toUpperCase()), 'OK', 'SET ' + k);
    for (const k of keys)
        eq(await cluster.get(k), k.toUpperCase(), 'GET ' + k);

    // A pipeline and a transaction on keys of one slot.
    const p = await cluster.pipeline().set('{q}a', '1').incr('{q}n').get('{q}a').exec();
    eq(p.map(r => r[1]), ['OK', 1, '1'], 'pipeline on {q}');
    const m = await cluster.multi().incr('{q}n').set('{q}b', 'x').exec();
    eq(m.map(r => r[1]), [2, 'OK'], 'MULTI on {q}');

    // Where each key lives: the node ioredis sent it to answers it, and the
    // caller checks that against the slot ranges of the topology file.
    for (const node of cluster.nodes('master')) {
        const port = node.options.port;
        for (const k of keys) {
            const v = await node.call('GET', k).catch(e => 'ERR ' + e.message);
            if (v === k.toUpperCase()) console.log(k + ' ' + port);
            else if (!String(v).startsWith('ERR MOVED ')) fail('node ' + port + ' GET ' + k + ': ' + v);
        }
    }
    eq(cluster.nodes('master').length, 3, 'masters ioredis found');
    await cluster.quit();
    clearTimeout(watchdog);
}

main().catch(e => fail(e.stack || String(e)));
