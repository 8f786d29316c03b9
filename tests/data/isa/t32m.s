# T32 M-profile classifier vectors (Armv8-M, Armv8.1-M); syntax: see a64.s.
# @triple thumbv8.1m.main +lob,+mve,+8msecext
# @addr 0x1e000

# ---- Armv8.1-M mainline ----
# @cfg arch=v81m profile=M opts=wfx
le lr, #-8               => BR cond T=-0x4 k=T32_LE +LOOP
le #-8                   => BR T=-0x4 k=T32_LE_NOLR
letp lr, #-8             => BR cond T=-0x4 k=T32_LETP
le lr, #-4094            => BR cond T=-0xffa k=T32_LE        # 11-bit offset max
le lr, #-2               => BR cond T=+0x2 k=T32_LE
wls lr, r4, #8           => BR cond T=+0xc k=T32_WLS
wls lr, r0, #4094        => BR cond T=+0x1002 k=T32_WLS
wlstp.8 lr, r3, #8       => BR cond T=+0xc k=T32_WLSTP
wlstp.64 lr, r3, #2      => BR cond T=+0x6 k=T32_WLSTP
dls lr, r2               => OTHER k=T32_DLS +LOOP
dlstp.32 lr, r2          => OTHER k=T32_DLS
lctp                     => OTHER k=T32_DLS
bf #4, #8                => OTHER k=T32_BF +LOOP
bfx #4, r3               => OTHER k=T32_BF
bfl #4, #8               => OTHER k=T32_BF
bflx #4, r3              => OTHER k=T32_BF
bxns lr                  => BRI iret k=T32_BXNS
bxns r1                  => BRI k=T32_BXNS
blxns r3                 => BRI link k=T32_BLXNS
bx lr                    => BRI iret k=T32_BX
blx r0                   => BRI link k=T32_BLX_REG
b.w #-1048576            => BR T=-0xffffc k=T32_B
bl #1000                 => BR link T=+0x3ec k=T32_BL
cbnz r1, #10             => BR cond T=+0xe k=T32_CBZ
pop {r4, r5, pc}         => BRI iret k=T32_POP_PC16
ldr pc, [sp], #8         => BRI iret k=T32_POP_PC
sg                       => OTHER k=NONE
svc #3                   => OTHER k=T32_SVC
wfi                      => WFX k=T32_WFI
isb sy                   => ISB k=T32_ISB
.inst.w 0xf000e800       => OTHER undef k=UNDEF              # BLX (immediate): no A32 state in M
.inst.w 0xf3de8f00       => OTHER undef k=UNDEF              # ERET: not in M profile
.inst.w 0xe990c000       => OTHER undef k=UNDEF              # RFEIA: not in M profile
it eq                    => OTHER k=T32_IT
bxeq lr                  => BRI iret cond cc=0 k=T32_BX

# ---- Armv8-M mainline: no low-overhead branches ----
# @cfg arch=v8m profile=M opts=wfx
.inst.w 0xf00fc005       => OTHER undef k=UNDEF              # le lr, #-8
.inst.w 0xf044c005       => OTHER undef k=UNDEF              # wls lr, r4, #8
bxns lr                  => BRI iret k=T32_BXNS

# ---- Armv7-M: no security extension ----
# @cfg arch=v7m profile=M opts=wfx
.inst.n 0x4774           => BRI iret k=T32_BX                # bxns lr encoding: BX with SBZ bit
bx lr                    => BRI iret k=T32_BX

# ---- OpenCSD 1.8.0 on an M-profile core (Cortex-M55 maps to ARCH_V8) ----
# @cfg ocsd=0x0800 m opts=wfx
le lr, #-8               => BR T=-0x4 k=T32_LE               # OpenCSD: not conditional
letp lr, #-8             => BR T=-0x4 k=T32_LETP
wls lr, r4, #8           => BR T=+0xc k=T32_WLS
wlstp.8 lr, r3, #8       => BR T=+0xc k=T32_WLSTP
le #-8                   => BR T=-0x4 k=T32_LE_NOLR
bf #4, #8                => OTHER k=T32_BF
.inst.w 0xf000e800       => BR link T=+0x4 isa=A32 k=T32_BLX_IMM
bxns lr                  => BRI iret k=T32_BXNS
