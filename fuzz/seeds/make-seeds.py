#!/usr/bin/env python3
"""Writes the hand-made seeds of fuzz/corpus/ (run from anywhere; idempotent).

Everything here is made by hand for the fuzzers: tiny ETMv4 streams, CoreSight frames, a
small snapshot archive. Nothing is copied from ../shared.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, '..', 'corpus')


def put(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def frames(chunks):
    """CoreSight formatter frames for [(trace_id, bytes), ...]: each frame starts with an ID
    byte, then up to 14 data bytes (even positions carry bit 0 in the flag byte 15)."""
    out = bytearray()
    for tid, data in chunks:
        for pos in range(0, len(data), 14):
            part = data[pos:pos + 14]
            part = part + b'\x00' * (14 - len(part))  # pad (zeros are ETMv4 async filler)
            frame = bytearray(16)
            frame[0] = (tid << 1) | 1
            flags = 0
            for k, b in enumerate(part):
                i = k + 1
                if i % 2 == 0:
                    frame[i] = b & 0xFE
                    flags |= (b & 1) << (i // 2)
                else:
                    frame[i] = b
            frame[15] = flags
            out += frame
    return bytes(out)


ASYNC = b'\x00' * 11 + b'\x80'
TINFO = b'\x01\x00'
TRACE_ON = b'\x04'


def ADDR_L64(a):
    """Long address, 64-bit IS0: A[8:2] and A[15:9] in 7-bit bytes, then A[63:16] in bytes."""
    return bytes([0x9d, (a >> 2) & 0x7f, (a >> 9) & 0x7f] + [(a >> (16 + 8 * k)) & 0xff
                                                              for k in range(6)])


CTXT = b'\x81\x31'          # context: EL1, SF, no CID/VMID bytes
ATOM_E = b'\xf7'
ATOM_N = b'\xf6'
TS = b'\x02\x85\x01'
EXC = b'\x06\x22\x00'
CCNT = b'\x0e\x05'
ETM4_STREAM = (ASYNC + TINFO + TRACE_ON + ADDR_L64(0x1000) + CTXT + ATOM_E + ATOM_N + ATOM_E +
               TS + b'\xd5' + b'\xdb' + b'\x95\x10' + EXC + ADDR_L64(0x1010) + ATOM_E +
               b'\x70' + b'\x0c' + CCNT + ASYNC + TINFO + b'\x9a\x01\x02\x03\x04' + b'\xfe')

A64_CODE = struct.pack('<8I',
                       0xd503201f,   # nop
                       0x91000400,   # add x0, x0, #1
                       0xf100281f,   # cmp x0, #10
                       0x54ffffa1,   # b.ne -12
                       0x94000002,   # bl +8
                       0x14000002,   # b +8
                       0xd65f03c0,   # ret
                       0x17fffff9)   # b -28


def snapshot_archive(trace, fmt='coresight', etm_type='ETM4', idr0=0x28000EA1):
    files = [
        ('snapshot.ini', '[snapshot]\nversion=1.0\ndescription=hand-made seed\n'
                         '[device_list]\ndevice0=cpu_0.ini\ndevice1=ETM_0.ini\n'
                         '[trace]\nmetadata=trace.ini\n'),
        ('cpu_0.ini', '[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n'
                      '[regs]\nPC=0x1000\n[dump1]\nfile=mem.bin\naddress=0x1000\n'
                      'length=0x20\n[dump2]\nfile=mem.bin\naddress=0x2000\noffset=0x10\n'),
        ('ETM_0.ini', '[device]\nname=ETM_0\nclass=trace_source\ntype=%s\n[regs]\n'
                      'TRCCONFIGR(0x004)=0x000000C1\nTRCTRACEIDR(0x010)=0x00000010\n'
                      'TRCAUTHSTATUS(0x3EE)=0x000000CC\nTRCIDR0(0x078)=0x%08X\n'
                      'TRCIDR1(0x079)=0x4100F403\nTRCIDR2(0x07A)=0x00000488\n'
                      'TRCIDR8(0x060)=0x00000000\nTRCIDR9(0x061)=0x0\nTRCIDR10(0x062)=0x0\n'
                      'TRCIDR11(0x063)=0x0\nTRCIDR12(0x064)=0x0\nTRCIDR13(0x065)=0x0\n'
                      % (etm_type, idr0)),
        ('trace.ini', '[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\n'
                      'file=cstrace.bin\nformat=%s\n[source_buffers]\nETM_0=ETB_0\n'
                      '[core_trace_sources]\ncpu_0=ETM_0\n' % fmt),
        ('cstrace.bin', trace),
        ('mem.bin', A64_CODE),
    ]
    out = bytearray()
    for name, data in files:
        if out:
            out += b'\n'
        out += b'@@ ' + name.encode() + b'\n' + (data if isinstance(data, bytes) else data.encode())
    return bytes(out)


def main():
    fr = frames([(0x10, ETM4_STREAM)])
    put('snapshot', 'etm4-formatted', snapshot_archive(fr))
    put('snapshot', 'etm4-raw', snapshot_archive(ETM4_STREAM, fmt='source_data'))
    put('snapshot', 'ete-dstream', snapshot_archive(b'\xff\xff\xff\x7f' + fr, fmt='dstream_coresight',
                                                    etm_type='ETE', idr0=0x28000EA1))
    # frame: flags, block seed, start index, stream
    fsync = b'\xff\xff\xff\x7f'
    two = frames([(0x10, ETM4_STREAM[:20]), (0x11, ETM4_STREAM[20:40]), (0x10, ETM4_STREAM[40:])])
    put('frame', 'memalign', bytes([0x01, 0, 0]) + two)
    put('frame', 'memalign-4xfsync-raw', bytes([0x19, 5, 3]) + fsync * 4 + two + fsync * 8 + two)
    put('frame', 'tpiu-fsync-hsync', bytes([0x16, 7, 0]) + fsync + two[:16] + b'\xff\x7f' +
        two[16:48] + fsync + two[48:])
    put('frame', 'dstream', bytes([0x12, 0, 0]) + b'\x00\x01' + fsync + two)
    # etm4: config selector, block seed, stream
    for sel in range(8):
        put('etm4', 'cfg%d' % sel, bytes([sel, 0]) + ETM4_STREAM)
    put('etm4', 'cfg1-regxor-blocks', bytes([0x09, 13]) + b'\x10\x00\x00\x00' * 4 + ETM4_STREAM)
    put('etm4', 'garbage-then-sync', bytes([2, 1]) + bytes(range(0x60, 0x100)) + ETM4_STREAM)
    # flow: config selector, decoder flags, stream (code image: see fuzz_flow.c)
    for sel in range(8):
        put('flow', 'cfg%d' % sel, bytes([sel, 0]) + ETM4_STREAM)
    kstream = (ASYNC + TINFO + TRACE_ON + ADDR_L64(0xffffffc000080000) + CTXT +
               b'\xf7\xf6\xf7\xf7' + EXC + ADDR_L64(0xffffffc000080028) + b'\xf7\xf7\xf6')
    put('flow', 'kernel-checks', bytes([1, 0x0f]) + kstream)
    put('flow', 'random-code', bytes([0, 0x20]) + ASYNC + TINFO + ADDR_L64(0x8000) + CTXT +
        b'\xf7' * 16 + ADDR_L64(0x8ff0) + b'\xf6\xf7' * 8)
    put('flow', 'tiny-region-reset', bytes([2, 0x80]) + ASYNC + TINFO + ADDR_L64(0x20000) + CTXT +
        b'\xf7\xf7' + ASYNC + TINFO + ADDR_L64(0x1000) + CTXT + b'\xf7' * 12)
    # v7trace: protocol/config selector, block seed, stream (see fuzz_v7trace.c)
    async5 = b'\x00' * 5 + b'\x80'
    # PTM: A-Sync, I-Sync (A32 0x8000, S), atoms, branch address (T32), exception branch, TS
    ptm = (b'\x11\x22' + async5 + b'\x08\x00\x80\x00\x00\x20' + b'\x84\xd0\x90' +
           b'\x81\x80\x80\x80\x18' + b'\x81\x80\x80\x80\x48\x02' +
           b'\x42\x85\x2b' + b'\x3c\x05\x6e\x72\x10\x76\x0c\x66' + b'\x88' * 4)
    for sel in (0x00, 0x04, 0x18, 0x40):
        put('v7trace', 'ptm-%02x' % sel, bytes([sel, 0]) + ptm)
    # ETMv3: A-Sync, I-Sync, P-headers, branch with exception, timestamp, data packets
    etm3 = (b'\x33' + async5 + b'\x08\x01\x80\x00\x00\x00' + b'\x84\x88\x90\xbc\xa8\x82' +
            b'\x81\x80\x80\x80\x08\x45' + b'\x42\xbd\x9a\x03' + b'\x04\x85\x01' +
            b'\x70\x85\x01\x01\x00\x80\x00\x00' + b'\x06\x12\x34' + b'\x0e\x01\x02\x03\x04' +
            b'\x2a\x91\x02\x78' + b'\x62\x66\x76\x7e\x50\x3c\x07' + b'\x82' * 3)
    for sel in (0x01, 0x05, 0x85, 0x45, 0x25):
        put('v7trace', 'etm3-%02x' % sel, bytes([sel, 0]) + etm3)
    # STM: junk, ASYNC (21 x F then 0), VERSION 3, M8, C8, D32M, FLAG_TS, D8TS, FREQ
    stm = (b'\xf1\x12' + b'\xff' * 10 + b'\x0f' + b'\x0f\x30' + b'\x41\x31\x30\x10' +
           b'\xaf\x01\x00\x00\x10' + b'\xee\x00\x00\x00\x30' + b'\xf4\x23\x25' +
           b'\x0f\x08\x21\xf4\x08\x10' + b'\xf2\x01\x20\x13\x0f\x06\x55')
    put('v7trace', 'stm', bytes([0x02, 0]) + stm)
    put('v7trace', 'stm-blocks', bytes([0x02, 5]) + stm)
    # ITM: junk, A-Sync, overflow, SWIT, local TS, DWT, GTS1 / GTS2, extension
    itm = (b'\xf0\x00\x00\x34' + async5 + b'\x70\x19\xbb\x20\xc0\x82\xc8\x04' +
           b'\x0e\x04\x10\x17\x00\x10\x00\x00\x95\x44\x94\xd6\xe8\xc8\x67' +
           b'\xb4\x93\x98\xa0\xa0\x80\x00\x28\x52\x45\x23\x8b\x01\x02\x03\x04')
    put('v7trace', 'itm', bytes([0x03, 0]) + itm)
    put('v7trace', 'itm-prescale', bytes([0x33, 3]) + itm)
    put('snapshot', 'ini-only', '[snapshot]\nversion=1.0\n[device_list]\ndevice0=x.ini\n'
                                '[trace]\nmetadata=trace.ini\n')
    # folded stacks (the flame graph): merging, blanks in names, bad lines, XML's specials,
    # UTF-8 valid and not, CRLF, counts at the 64-bit limit, narrow frames
    put('flame', 'basic', 'main;work;inner 300\nmain;work 100\nmain;parse 120\n'
                          'main;work;inner 150\nstart_thread;worker 119\n')
    put('flame', 'bad-lines', 'no count\nmain;;x 5\n;a 1\na; 2\na -5\na 1.5\n\n  \n'
                              'a b;c\td 7\r\nok 99999999999999999999\nlast 3')
    put('flame', 'names', b'<a&b>;"q\'\x00\x80x\xe2\x82;\xed\xa0\x80\x01;d\xc3\xa9j\xc3\xa0 1\n'
                          b'sys_[k];[unknown];[gap] 2\n\xef\xbf\xbe;\xf4\x90\x80\x80 3\n')
    put('flame', 'huge', 'x;a 18446744073709551615\nx;b 1\ny 9223372036854775807\n')
    put('flame', 'narrow', ''.join('m;f%d;g 1\n' % i for i in range(50)) + 'm;big 999999\n')


if __name__ == '__main__':
    main()
