# T32 (A/R profile) classifier vectors; syntax: see a64.s. Targets are relative to the
# instruction address (PC = address + 4).
# @triple thumbv7a +virtualization,+trustzone,+mp
# @addr 0x8000

# ---- Armv7-A, WFx traced as branches ----
# @cfg arch=v7a opts=wfx
b.n #-4                  => BR T=+0x0 k=T32_B16
b.n #2046                => BR T=+0x802 k=T32_B16           # imm11 max
b.n #-2048               => BR T=-0x7fc k=T32_B16           # imm11 min
beq.n #254               => BR cond cc=0 T=+0x102 k=T32_B_COND16
bne.n #-256              => BR cond cc=1 T=-0xfc k=T32_B_COND16
ble.n #0                 => BR cond cc=13 T=+0x4 k=T32_B_COND16
bne.w #1048574           => BR cond cc=1 T=+0x100002 k=T32_B_COND
bgt.w #-1048576          => BR cond cc=12 T=-0xffffc k=T32_B_COND
bhi.w #2                 => BR cond cc=8 T=+0x6 k=T32_B_COND
b.w #16777214            => BR T=+0x1000002 k=T32_B         # S:I1:I2 max
b.w #-16777216           => BR T=-0xfffffc k=T32_B          # min
b.w #4096                => BR T=+0x1004 k=T32_B
bl #16777214             => BR link T=+0x1000002 k=T32_BL +LINK
bl #-16777216            => BR link T=-0xfffffc k=T32_BL
bl #0                    => BR link T=+0x4 k=T32_BL
bl #-4194304             => BR link T=-0x3ffffc k=T32_BL    # S=1, J1=J2=0
blx #16                  => BR link T=+0x14 isa=A32 k=T32_BLX_IMM +ISA_SWITCH
blx #-16777216           => BR link T=-0xfffffc isa=A32 k=T32_BLX_IMM
cbz r0, #126             => BR cond T=+0x82 k=T32_CBZ      # i:imm5 max
cbnz r7, #0              => BR cond T=+0x4 k=T32_CBZ
cbz r3, #64              => BR cond T=+0x44 k=T32_CBZ
bx lr                    => BRI iret k=T32_BX +RETURN +INTERWORK
bx r3                    => BRI k=T32_BX
blx r3                   => BRI link k=T32_BLX_REG
blx lr                   => BRI link k=T32_BLX_REG
bxj r2                   => BRI k=T32_BXJ
pop {r4, pc}             => BRI iret k=T32_POP_PC16
pop {pc}                 => BRI iret k=T32_POP_PC16
pop.w {r4-r11, pc}       => BRI iret k=T32_POPW_PC
ldr.w pc, [sp], #4       => BRI iret k=T32_POP_PC
ldr.w pc, [sp], #-4      => BRI k=T32_LDR_PC               # U=0: not OpenCSD's POP idiom
ldr.w pc, [sp, #4]!      => BRI k=T32_LDR_PC
mov pc, lr               => BRI iret k=T32_MOV_PC
mov pc, r3               => BRI k=T32_MOV_PC
add pc, r2               => BRI k=T32_ADD_PC
add pc, lr               => BRI k=T32_ADD_PC
tbb [r0, r1]             => BRI k=T32_TBB
tbh [r0, r1, lsl #1]     => BRI k=T32_TBB
ldr pc, [r0, #4]         => BRI k=T32_LDR_PC
ldr pc, [r1, #-4]        => BRI k=T32_LDR_PC
ldr pc, [r2, r3, lsl #2] => BRI k=T32_LDR_PC
ldr.w pc, [pc, #8]       => BRI k=T32_LDR_PC
ldr.w pc, [pc, #-8]      => BRI k=T32_LDR_PC
ldm r0, {r1, pc}         => BRI k=T32_LDM_PC
ldmdb r0!, {r4, pc}      => BRI k=T32_LDM_PC
ldm r0!, {r1, pc}        => BRI k=T32_LDM_PC
rfeia r0                 => BRI eret k=T32_RFE +ERET
rfedb sp!                => BRI eret k=T32_RFE
subs pc, lr, #4          => BRI eret k=T32_SUBS_PC_LR
eret                     => BRI eret k=T32_ERET
svc #0                   => OTHER k=T32_SVC +EXCGEN
udf #0                   => OTHER undef k=T32_UDF
udf.w #0                 => OTHER undef k=T32_UDF
bkpt #0                  => OTHER k=T32_BKPT
hvc #0                   => OTHER k=T32_HVC
smc #0                   => OTHER k=T32_SMC
isb sy                   => ISB k=T32_ISB
dsb sy                   => OTHER k=T32_DSB +BARRIER
dmb ish                  => OTHER k=T32_DMB
mcr p15, #0, r0, c7, c5, #4  => ISB k=T32_ISB             # CP15ISB
mcr p15, #0, r0, c7, c10, #4 => OTHER k=T32_DSB           # CP15DSB
mcr p15, #0, r0, c7, c10, #5 => OTHER k=T32_DMB           # CP15DMB
wfi                      => WFX k=T32_WFI
wfe                      => WFX k=T32_WFE
wfi.w                    => WFX k=T32_WFI
wfe.w                    => WFX k=T32_WFE
nop.w                    => OTHER k=NONE
sev.w                    => OTHER k=NONE
msr apsr_nzcvq, r0       => OTHER k=NONE
mrs r0, apsr             => OTHER k=NONE
cpsid i                  => OTHER k=NONE
clrex                    => OTHER k=NONE
adds r0, r1              => OTHER k=NONE
ldr.w r0, [r1]           => OTHER k=NONE
push {r4, lr}            => OTHER k=NONE
push.w {r4-r11, lr}      => OTHER k=NONE
ldm r0, {r1, r2}         => OTHER k=NONE
str.w lr, [sp, #-4]!     => OTHER k=NONE
mov r0, pc               => OTHER k=NONE
add r0, pc               => OTHER k=NONE
.inst.w 0xf00fc001       => OTHER undef k=UNDEF             # LE encoding: BLX with H=1 in v7
.inst.w 0xf040c001       => OTHER undef k=UNDEF             # WLS encoding
.inst.n 0xde00           => OTHER undef k=T32_UDF
# IT blocks: the IT state runs through consecutive vectors
it eq                    => OTHER k=T32_IT +IT
moveq r0, r1             => OTHER cond cc=0 k=NONE
itte ne                  => OTHER k=T32_IT
addne r0, r1             => OTHER cond cc=1
movne r2, r3             => OTHER cond cc=1
bxeq lr                  => BRI iret cond cc=0 k=T32_BX
add r0, r1               => OTHER k=NONE
beq.n #8                 => BR cond cc=0 T=+0xc k=T32_B_COND16
ittt hi                  => OTHER k=T32_IT
movhi r0, #1             => OTHER cond cc=8
movhi r1, #2             => OTHER cond cc=8
pophi {pc}               => BRI iret cond cc=8 k=T32_POP_PC16
it al                    => OTHER k=T32_IT
add r0, r1               => OTHER k=NONE                    # IT AL: unconditional
mov r0, r1               => OTHER k=NONE

# ---- BLX target alignment from a halfword-aligned address ----
# @addr 0x8002
blx #16                  => BR link T=+0x12 isa=A32 k=T32_BLX_IMM
blx #-4                  => BR link T=-0x2 isa=A32 k=T32_BLX_IMM
b.w #4096                => BR T=+0x1004 k=T32_B

# ---- WFx not traced as branches ----
# @cfg arch=v7a
# @addr 0x8000
wfi                      => OTHER k=T32_WFI +WFX
wfe.w                    => OTHER k=T32_WFE

# ---- OpenCSD 1.8.0 ----
# @cfg ocsd=0x0700 opts=wfx
subs pc, lr, #4          => BRI k=T32_SUBS_PC_LR
eret                     => BRI k=T32_ERET
rfeia r0                 => BRI k=T32_RFE
bx lr                    => BRI iret k=T32_BX
.inst.w 0xf00fc001       => BR T=+0x4 k=T32_LE               # OpenCSD decodes LE in any arch
.inst.w 0xf040c001       => BR T=+0x4 k=T32_WLS
it eq                    => OTHER k=T32_IT
moveq r0, r1             => OTHER cond cc=0
it al                    => OTHER k=T32_IT
add r0, r1               => OTHER cond k=NONE                # OpenCSD: every IT-block instruction
