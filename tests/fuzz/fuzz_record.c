/*
 * fuzz_record.c - libFuzzer harness for the log record checker and decoder
 * (common/record.c): whatever bytes a segment holds, checking and decoding
 * them never crashes or reads out of bounds, and a record that passes the
 * check decodes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    uint64_t lsn = 0;
    if (size >= 8) memcpy(&lsn, buf, 8); /* let the input pick the expected lsn */
    int64_t rc = rec_check(buf, lsn, size);
    if (rc > 0) {
        if ((uint64_t)rc > size || rc % REC_ALIGN) abort();
        uint16_t id, argc;
        rec_arg_t args[16];
        rec_hdr_t h;
        memcpy(&h, buf, sizeof(h));
        if (h.type == REC_CMD) rec_decode_cmd(buf, &id, &argc, args, 16);
    }
    uint16_t id, argc;
    rec_arg_t args[16];
    if (rec_decode_payload(buf, size, &id, &argc, args, 16) == 0) {
        for (uint16_t i = 0; i < argc && i < 16; i++)
            if (args[i].ptr < buf || args[i].ptr + args[i].len > buf + size) abort();
    }
    free(buf);
    return 0;
}
