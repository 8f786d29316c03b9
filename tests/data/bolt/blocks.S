// Basic blocks as llvm-bolt 16 makes them, for tests/unit/test_profile.c
// (test_bolt_blocks_from_elf). blocks.elf is this file assembled and linked:
//   clang --target=aarch64-linux-gnu -c blocks.S -o blocks.o
//   ld.lld -static -e f -Ttext=0x10000 --build-id=none --omagic blocks.o -o blocks.elf
// f is at 0x10000, g at 0x10024.
    .text
    .globl f
    .type f, %function
f:
    cmp x0, #1          // f+0
    b.eq 1f             // f+4   conditional, then an unconditional B: one block
    b 2f                // f+8
1:  add x0, x0, #1      // f+c   branch target: a block
2:  cbz x0, g           // f+10  conditional tail call: f+14 starts a block although a B follows
    b 3f                // f+14
    .word 0x54ffff61    // f+18  data in code ($d): would decode as b.ne f+4, a block start
3:  tbnz x0, #3, 1b     // f+1c  conditional, then a RET: f+20 starts a block
    ret                 // f+20
    .size f, .-f

    .type g, %function
g:
    adr x1, 4f          // g+0
    br x1               // g+4   indirect jump: BOLT 16 builds no CFG for g
4:  ret                 // g+8
    .size g, .-g
