# A32 classifier vectors; syntax: see a64.s. Targets are relative to the instruction address
# (PC = address + 8).
# @triple armv7a +virtualization,+trustzone,+mp
# @addr 0x10000

# ---- Armv7-A, WFx traced as branches ----
# @cfg arch=v7a opts=wfx
b #0                     => BR T=+0x8 k=A32_B
b #-8                    => BR T=+0x0 k=A32_B
b #33554428              => BR T=+0x2000004 k=A32_B         # imm24 max
b #-33554432             => BR T=-0x1fffff8 k=A32_B         # imm24 min
beq #8                   => BR cond cc=0 T=+0x10 k=A32_B
bgt #-16                 => BR cond cc=12 T=-0x8 k=A32_B
bl #4096                 => BR link T=+0x1008 k=A32_BL
blne #0                  => BR link cond cc=1 T=+0x8 k=A32_BL
blx #2                   => BR link T=+0xa isa=T32 k=A32_BLX_IMM +ISA_SWITCH
blx #0                   => BR link T=+0x8 isa=T32 k=A32_BLX_IMM
blx #-33554432           => BR link T=-0x1fffff8 isa=T32 k=A32_BLX_IMM
blx #33554430            => BR link T=+0x2000006 isa=T32 k=A32_BLX_IMM
bx lr                    => BRI iret k=A32_BX +RETURN
bxeq lr                  => BRI iret cond cc=0 k=A32_BX
bx r0                    => BRI k=A32_BX
blx r1                   => BRI link k=A32_BLX_REG
blx lr                   => BRI link k=A32_BLX_REG
bxj r2                   => BRI k=A32_BXJ
pop {r4, pc}             => BRI iret k=A32_POP_PC
pop {pc}                 => BRI iret k=A32_POP1_PC
ldr pc, [sp], #8         => BRI iret k=A32_POP1_PC
ldr pc, [sp, #4]         => BRI k=A32_LDR_PC
ldr pc, [sp], #-4        => BRI k=A32_LDR_PC
ldm r0, {r1, pc}         => BRI k=A32_LDM_PC
ldmib r0!, {r4, pc}      => BRI k=A32_LDM_PC
ldmdb sp!, {r4, pc}      => BRI k=A32_LDM_PC
ldm r0, {r1, pc}^        => BRI eret k=A32_LDM_PC_ERET
ldr pc, [r0]             => BRI k=A32_LDR_PC
ldr pc, [r1, r2]         => BRI k=A32_LDR_PC
ldr pc, [r1, -r2, lsl #2] => BRI k=A32_LDR_PC
ldr pc, [pc, #-4]        => BRI k=A32_LDR_PC
mov pc, lr               => BRI iret k=A32_MOV_PC_LR
moveq pc, lr             => BRI iret cond cc=0 k=A32_MOV_PC_LR
mov pc, r0               => BRI k=A32_MOV_PC
mov pc, r0, lsl #2       => BRI k=A32_MOV_PC
movs pc, lr              => BRI eret k=A32_ALU_PC_ERET
add pc, pc, r0, lsl #2   => BRI k=A32_ALU_PC
add pc, r0, #4           => BRI k=A32_ALU_PC
sub pc, lr, #4           => BRI k=A32_ALU_PC
subs pc, lr, #4          => BRI eret k=A32_ALU_PC_ERET
mov pc, #0x1000          => BRI k=A32_ALU_PC
eret                     => BRI eret k=A32_ERET
rfeia r0                 => BRI eret k=A32_RFE
rfedb sp!                => BRI eret k=A32_RFE
svc #0                   => OTHER k=A32_SVC +EXCGEN
svceq #1                 => OTHER cond cc=0 k=A32_SVC
hvc #0                   => OTHER k=A32_HVC
smc #0                   => OTHER k=A32_SMC
bkpt #0                  => OTHER k=A32_BKPT
udf #0                   => OTHER undef k=A32_UDF
isb sy                   => ISB k=A32_ISB
dsb sy                   => OTHER k=A32_DSB +BARRIER
dmb ish                  => OTHER k=A32_DMB
mcr p15, #0, r0, c7, c5, #4  => ISB k=A32_ISB               # CP15ISB
mcr p15, #0, r0, c7, c10, #4 => OTHER k=A32_DSB
mcr p15, #0, r0, c7, c10, #5 => OTHER k=A32_DMB
wfi                      => WFX k=A32_WFI
wfe                      => WFX k=A32_WFE
wfieq                    => WFX cond cc=0 k=A32_WFI
nop                      => OTHER k=NONE
yield                    => OTHER k=NONE
clrex                    => OTHER k=NONE
add r0, r1, r2           => OTHER k=NONE
addeq r0, r1, r2         => OTHER cond cc=0 k=NONE
cmp r0, #1               => OTHER k=NONE
tst r0, #1               => OTHER k=NONE
mrs r0, apsr             => OTHER k=NONE
msr cpsr_c, r0           => OTHER k=NONE
push {r4, lr}            => OTHER k=NONE
str pc, [sp, #-4]!       => OTHER k=NONE
stm r0, {r1, pc}         => OTHER k=NONE
ldr r0, [pc, #4]         => OTHER k=NONE
mov r0, pc               => OTHER k=NONE
add r0, pc, #8           => OTHER k=NONE

# ---- DSB/DMB as waypoints, WFx not ----
# @cfg arch=v7a opts=dsb
dsb sy                   => DSB k=A32_DSB
dmb ish                  => DSB k=A32_DMB
mcr p15, #0, r0, c7, c10, #4 => DSB k=A32_DSB
wfi                      => OTHER k=A32_WFI

# ---- OpenCSD 1.8.0 ----
# @cfg ocsd=0x0700 opts=wfx
eret                     => OTHER k=A32_ERET                # OpenCSD: not a branch
subs pc, lr, #4          => BRI k=A32_ALU_PC_ERET
movs pc, lr              => BRI k=A32_ALU_PC_ERET
rfeia r0                 => BRI k=A32_RFE
ldm r0, {r1, pc}^        => BRI k=A32_LDM_PC_ERET
bx lr                    => BRI iret k=A32_BX
