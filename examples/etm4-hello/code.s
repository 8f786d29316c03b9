// etm4-hello: the code the trace in trace.hex runs. The memory dumps of cpu_0.ini hold it:
// user.bin (section .text.user, at 0x401000) and kernel.bin (.text.kernel, at
// 0xffffff8008082400). Rebuild them with (tests/scripts/dump_example.sh checks they match):
//   clang --target=aarch64-linux-gnu -c code.s -o code.o
//   llvm-objcopy -O binary --only-section=.text.user code.o user.bin
//   llvm-objcopy -O binary --only-section=.text.kernel code.o kernel.bin

    .section .text.user, "ax"
main:                         // 0x401000, EL0: greet twice, then write(2) and exit(2)
    mov  w19, #2
1:  bl   greet                // 0x401004
    subs w19, w19, #1         // 0x401008
    b.ne 1b
    mov  x8, #64              // write
    svc  #0                   // 0x401014: return address 0x401018
    mov  x8, #93              // exit
    svc  #0                   // 0x40101c: return address 0x401020
greet:                        // 0x401020
    add  x0, x0, #1
    cmp  x0, #8
    b.hs 2f                   // not taken
    add  x1, x1, #1
2:  ret                       // 0x401030

    .section .text.kernel, "ax"
el0_sync:                     // 0xffffff8008082400, EL1: the system call's vector
    mov  x9, #6
1:  subs x9, x9, #1
    b.ne 1b                   // taken 5 times, then not
    eret
