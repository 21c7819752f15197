#!/bin/bash
# Seed codestreams for the mutation campaign (issue 9 item 4): crops of the project's
# photographs encoded by opj_compress and grk_compress with the options the corpus tests
# cover (tiles, precincts, layers, every code-block style, the five progressions, POC,
# SOP/EPH, PLT, ROI, 9/7, 16-bit). Crops are cut with opj_decompress -d from a lossy
# encode of the full picture (no image library needed).
#   bash make_seeds.sh OUT_DIR
set -euo pipefail
OUT=${1:?output folder}
MEDIA=$(cd "$(dirname "$0")/../../../app/media/data" && pwd)
mkdir -p "$OUT/src"
S=$OUT/src
[ -f "$S/full.j2k" ] || opj_compress -i "$MEDIA/flower.png" -o "$S/full.j2k" -r 20 >/dev/null
[ -f "$S/m.ppm" ] || opj_decompress -i "$S/full.j2k" -o "$S/m.ppm" -d 600,400,1112,784 >/dev/null   # 512x384
[ -f "$S/l.ppm" ] || opj_decompress -i "$S/full.j2k" -o "$S/l.ppm" -d 100,100,1124,868 >/dev/null   # 1024x768
[ -f "$S/s.ppm" ] || opj_decompress -i "$S/full.j2k" -o "$S/s.ppm" -d 1000,700,1320,940 >/dev/null  # 320x240
[ -f "$S/hdr.j2k" ] || opj_compress -i "$MEDIA/hdr_room.png" -o "$S/hdr.j2k" >/dev/null
[ -f "$S/h_0.pgx" ] || opj_decompress -i "$S/hdr.j2k" -o "$S/h.pgx" -d 0,0,400,300 >/dev/null      # 16-bit grey
opj() { local name=$1 in=$2; shift 2; opj_compress -i "$S/$in" -o "$OUT/$name.j2k" "$@" >/dev/null; }
grk() { local name=$1 in=$2; shift 2; grk_compress -i "$S/$in" -o "$OUT/$name.j2k" "$@" >/dev/null 2>&1; }
opj m_default m.ppm
opj m_lossy m.ppm -I -r 10
opj l_lossy l.ppm -I -r 20
opj l_lossless l.ppm
opj m_tiles32 m.ppm -t 32,32
opj m_tiles_lossy m.ppm -I -t 64,48 -r 10 -p PCRL
opj m_precincts m.ppm -c [64,64],[32,32],[16,16] -b 16,16 -p RPCL
opj m_layers m.ppm -r 80,40,20,10,5,3,2,1
opj m_lrcp m.ppm -p LRCP -c [32,32] -b 16,16 -r 20,5,1
opj m_cprl m.ppm -p CPRL -c [32,32] -b 16,16 -r 20,5,1 -TP C
opj m_modes m.ppm -M 63 -r 10,3,1
opj m_bypass_lossy m.ppm -I -M 1 -r 8
opj m_sop_eph m.ppm -SOP -EPH -r 10,1
opj m_roi m.ppm -ROI c=0,U=5
opj s_levels0 s.ppm -n 1
opj s_cb4 s.ppm -b 4,4
opj s_cb1024x4 s.ppm -b 1024,4 -n 1
opj s_offsets s.ppm -d 17,9 -t 60,40 -T 7,3 -TP R
opj h16 h_0.pgx
opj h16_lossy h_0.pgx -I -r 8
grk m_grk m.ppm
grk m_grk_poc m.ppm -r 20,10,1 -P T0=0,0,1,4,3,LRCP/T0=0,0,3,6,3,CPRL
grk m_grk_plt m.ppm -L -t 64,64
grk m_grk_modes m.ppm -M 63 -p RPCL -c [32,32]
grk l_grk_lossy l.ppm -I -r 12
ls "$OUT"/*.j2k | wc -l
