#!/usr/bin/env python3
"""Structure-aware mutants of JPEG 2000 codestreams (issue 9 item 4).

Each mutant applies 1-3 edits chosen among the kinds a hostile sender or a damaged link
produces, aimed at the fields that decide how much a decoder must set up or compute:
SIZ (sizes, offsets, tiles, components, sub-sampling, depth), COD/COC (levels, code-block
size and style, precincts, layers, progression), QCD (guard bits, exponents), SOT (Psot,
tile index, tile-part numbers), packet headers and bodies, plus whole tile-parts
duplicated, dropped or cut. Deterministic: the same seed gives the same mutants.

  python3 mutate.py SEED_DIR OUT_DIR [per_seed=100] [seed=20261124] [headers]

"headers": every mutant grows the picture (SIZ sizes times 2-64, tiles kept or grown) and
changes 1-3 COD/QCD fields too, the combinations that decide how much a decoder sets up
(precincts, code-blocks, layers, bit-planes) for the bytes it has.
"""
import os
import random
import struct
import sys

SOC, SOT, SOD, EOC = 0xFF4F, 0xFF90, 0xFF93, 0xFFD9


def parse(data):
    """Main-header marker segments [(marker, offset of the marker, length field)], and the
    tile-parts [(offset of SOT, Psot, offset of SOD's body)]."""
    segs, parts = [], []
    pos = 2
    while pos + 4 <= len(data):
        m = struct.unpack_from(">H", data, pos)[0]
        if m == SOT:
            break
        if m < 0xFF00:
            return segs, parts
        ln = struct.unpack_from(">H", data, pos + 2)[0]
        segs.append((m, pos, ln))
        pos += 2 + ln
    while pos + 12 <= len(data) and struct.unpack_from(">H", data, pos)[0] == SOT:
        psot = struct.unpack_from(">I", data, pos + 6)[0]
        # The tile-part header's segments end at SOD.
        q = pos + 12
        while q + 4 <= len(data) and struct.unpack_from(">H", data, q)[0] != SOD:
            q += 2 + struct.unpack_from(">H", data, q + 2)[0]
        parts.append((pos, psot, q + 2))
        if psot == 0:
            break
        pos += psot
    return segs, parts


def interesting(rng, bits):
    top = (1 << bits) - 1
    return rng.choice([0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 127, 128, 255, 256, 1000, 1023, 1024,
                       4096, 16383, 16384, 65535, 65536, 1 << 20, 1 << 24, 1 << 31, top, top - 1,
                       rng.randrange(0, top + 1)]) & top


def put(data, off, bits, value):
    if off + bits // 8 > len(data):
        return
    fmt = {8: ">B", 16: ">H", 32: ">I"}[bits]
    struct.pack_into(fmt, data, off, value)


def field(data, off, bits):
    fmt = {8: ">B", 16: ">H", 32: ">I"}[bits]
    return struct.unpack_from(fmt, data, off)[0] if off + bits // 8 <= len(data) else 0


def nudge(rng, data, off, bits):
    """Sets a field to an interesting value or moves it a little."""
    if rng.random() < 0.5:
        put(data, off, bits, interesting(rng, bits))
    else:
        v = field(data, off, bits)
        v = v * rng.choice([2, 4, 16]) if rng.random() < 0.3 else v + rng.choice([-3, -2, -1, 1, 2, 3])
        put(data, off, bits, max(0, v) & ((1 << bits) - 1))


def mutate_siz(rng, data, off):
    # After the marker and Lsiz: Rsiz(2) Xsiz Ysiz XOsiz YOsiz XTsiz YTsiz XTOsiz YTOsiz (4 each)
    # Csiz(2), then Ssiz XRsiz YRsiz per component.
    base = off + 4
    k = rng.randrange(12)
    if k < 8:
        nudge(rng, data, base + 2 + 4 * k, 32)
    elif k == 8:
        nudge(rng, data, base + 34, 16)  # Csiz
    else:
        ncomp = max(1, field(data, base + 34, 16))
        c = base + 36 + 3 * rng.randrange(min(ncomp, 4))
        nudge(rng, data, c + (k - 9), 8)  # Ssiz, XRsiz, YRsiz


def mutate_cod(rng, data, off, ln):
    # Scod(1) progression(1) layers(2) MCT(1) levels(1) xcb(1) ycb(1) style(1) transform(1) precincts...
    base = off + 4
    k = rng.randrange(10)
    if k == 0:
        put(data, base, 8, rng.randrange(8))
    elif k == 1:
        put(data, base + 1, 8, rng.choice([0, 1, 2, 3, 4, 5, 255]))
    elif k == 2:
        nudge(rng, data, base + 2, 16)
    elif k == 3:
        put(data, base + 5, 8, rng.choice([0, 1, 5, 10, 15, 31, 32, 33, 255]))
    elif k in (4, 5):
        put(data, base + 5 + k - 3, 8, rng.choice([0, 1, 2, 4, 8, 9, 15, 255]))
    elif k == 6:
        put(data, base + 8, 8, rng.randrange(256))
    elif k == 7:
        put(data, base + 9, 8, rng.choice([0, 1, 2]))
    elif ln > 12:
        put(data, base + 10 + rng.randrange(ln - 12), 8, rng.choice([0x00, 0x11, 0xFF, 0xF0, 0x0F, rng.randrange(256)]))


def mutate_qcd(rng, data, off, ln, first):
    base = off + 4 + first  # QCC has a component index first
    if rng.random() < 0.4:
        put(data, base, 8, (rng.randrange(8) << 5) | rng.choice([0, 1, 2, field(data, base, 8) & 31]))
    elif ln > 3 + first:
        at = base + 1 + rng.randrange(max(1, ln - 3 - first))
        put(data, at, 8, rng.choice([0x00, 0xF8, 0xFF, 0x08, rng.randrange(256)]))


def mutate_sot(rng, data, part):
    sot, psot, _ = part
    k = rng.randrange(4)
    if k == 0:
        nudge(rng, data, sot + 4, 16)  # Isot
    elif k == 1:
        put(data, sot + 6, 32, rng.choice([0, 12, 14, psot // 2, psot + 1, psot - 1, 0xFFFFFFFF, interesting(rng, 32)]))
    elif k == 2:
        put(data, sot + 10, 8, rng.choice([0, 1, 2, 254, 255]))
    else:
        put(data, sot + 11, 8, rng.choice([0, 1, 2, 254, 255]))


def mutate_packets(rng, data, part):
    _, psot, body = part
    end = min(len(data), part[0] + psot) if psot else len(data)
    if body >= end:
        return
    # Packet headers sit at the start of the body and after each packet; hit the first bytes hardest.
    span = end - body
    at = body + (rng.randrange(min(span, 64)) if rng.random() < 0.6 else rng.randrange(span))
    k = rng.randrange(3)
    if k == 0:
        data[at] ^= 1 << rng.randrange(8)
    elif k == 1:
        data[at] = rng.choice([0x00, 0xFF, 0x7F, 0x80, rng.randrange(256)])
    else:
        n = min(rng.randrange(1, 16), end - at)
        for i in range(n):
            data[at + i] = rng.choice([0xFF, 0x00])


def mutate_structure(rng, data, parts):
    k = rng.randrange(4)
    if k == 0 and parts:  # duplicate a tile-part
        sot, psot, _ = rng.choice(parts)
        if psot:
            chunk = data[sot:sot + psot]
            at = rng.choice(parts)[0]
            data[at:at] = chunk
    elif k == 1 and len(parts) > 1:  # drop a tile-part
        sot, psot, _ = rng.choice(parts[:-1])
        if psot:
            del data[sot:sot + psot]
    elif k == 2:  # cut
        del data[rng.randrange(2, len(data)):]
    else:  # random bytes inserted
        at = rng.randrange(2, len(data))
        data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 32)))


def mutate(rng, data):
    segs, parts = parse(data)
    choice = rng.random()
    by = {}
    for m, off, ln in segs:
        by.setdefault(m, []).append((off, ln))
    if choice < 0.18 and 0xFF51 in by:
        mutate_siz(rng, data, by[0xFF51][0][0])
    elif choice < 0.34 and 0xFF52 in by:
        off, ln = by[0xFF52][0]
        mutate_cod(rng, data, off, ln)
    elif choice < 0.44 and 0xFF5C in by:
        off, ln = by[0xFF5C][0]
        mutate_qcd(rng, data, off, ln, 0)
    elif choice < 0.56 and parts:
        mutate_sot(rng, data, rng.choice(parts))
    elif choice < 0.80 and parts:
        mutate_packets(rng, data, rng.choice(parts))
    elif choice < 0.90:
        mutate_structure(rng, data, parts)
    else:  # plain bit flips anywhere
        for _ in range(rng.randrange(1, 5)):
            at = rng.randrange(len(data))
            data[at] ^= 1 << rng.randrange(8)


def mutate_headers(rng, data):
    segs, _ = parse(data)
    by = {}
    for m, off, ln in segs:
        by.setdefault(m, []).append((off, ln))
    if 0xFF51 not in by or 0xFF52 not in by:
        return mutate(rng, data)
    siz = by[0xFF51][0][0] + 4  # Rsiz
    k = rng.choice([2, 4, 8, 16, 64])
    for f in (2, 6):  # Xsiz, Ysiz
        put(data, siz + f, 32, min(field(data, siz + f, 32) * k, 65535))
    if rng.random() < 0.5:
        for f in (18, 22):  # XTsiz, YTsiz
            put(data, siz + f, 32, min(field(data, siz + f, 32) * k, 65535))
    for _ in range(rng.randrange(1, 4)):
        if rng.random() < 0.7:
            off, ln = by[0xFF52][0]
            mutate_cod(rng, data, off, ln)
        elif 0xFF5C in by:
            off, ln = by[0xFF5C][0]
            mutate_qcd(rng, data, off, ln, 0)


def main():
    seed_dir, out_dir = sys.argv[1], sys.argv[2]
    per_seed = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 20261124)
    headers = len(sys.argv) > 5 and sys.argv[5] == "headers"
    os.makedirs(out_dir, exist_ok=True)
    seeds = sorted(f for f in os.listdir(seed_dir) if f.endswith(".j2k"))
    for name in seeds:
        with open(os.path.join(seed_dir, name), "rb") as f:
            original = f.read()
        for i in range(per_seed):
            data = bytearray(original)
            if headers:
                mutate_headers(rng, data)
            else:
                for _ in range(rng.choice([1, 1, 2, 3])):
                    if len(data) > 16:
                        mutate(rng, data)
            with open(os.path.join(out_dir, f"{name[:-4]}_{i:04d}.j2k"), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
