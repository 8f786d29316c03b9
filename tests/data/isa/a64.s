# A64 classifier vectors. Syntax (read by gen-vectors.sh, never by an assembler as a whole):
#   # @triple <llvm triple> <-mattr list>   assembler target for this file
#   # @cfg ...                              classifier configuration for the following lines
#   # @addr <hex>                           address of the following instructions
#   <instruction> => <expected classification>   [# comment]
# Expectation tokens: type OTHER|BR|BRI|ISB|DSB|WFX|TSTART; sub-type link|ret|eret|iret;
# cond; undef; cc=<n>; T=<+/-hex> (target - address); isa=<A32|T32|A64> (after the branch);
# k=<kind name>; +<FLAG> (flag must be set). Encodings llvm-mc 14 cannot produce are written
# as .inst with the encoding from the Arm ARM (DDI0487/DDI0602), named in the comment.
# @triple aarch64 +v9a,+pauth,+tme,+mte,+wfxt,+hbc,+xs,+sb,+bti
# @addr 0x400000

# ---- Armv9-A, every feature, WFx traced as branches ----
# @cfg arch=v9a opts=wfx
b #0x100                 => BR T=+0x100 k=A64_B
b #0                     => BR T=+0x0 k=A64_B
b #-4                    => BR T=-0x4 k=A64_B
b #134217724             => BR T=+0x7fffffc k=A64_B          # imm26 max
b #-134217728            => BR T=-0x8000000 k=A64_B          # imm26 min
bl #0x2000               => BR link T=+0x2000 k=A64_BL +LINK
bl #134217724            => BR link T=+0x7fffffc k=A64_BL
bl #-134217728           => BR link T=-0x8000000 k=A64_BL
b.eq #8                  => BR cond cc=0 T=+0x8 k=A64_B_COND
b.ne #-8                 => BR cond cc=1 T=-0x8 k=A64_B_COND
b.hs #12                 => BR cond cc=2 T=+0xc
b.lo #12                 => BR cond cc=3 T=+0xc
b.mi #12                 => BR cond cc=4 T=+0xc
b.pl #12                 => BR cond cc=5 T=+0xc
b.vs #12                 => BR cond cc=6 T=+0xc
b.vc #12                 => BR cond cc=7 T=+0xc
b.hi #12                 => BR cond cc=8 T=+0xc
b.ls #12                 => BR cond cc=9 T=+0xc
b.ge #12                 => BR cond cc=10 T=+0xc
b.lt #12                 => BR cond cc=11 T=+0xc
b.gt #1048572            => BR cond cc=12 T=+0xffffc          # imm19 max
b.le #-1048576           => BR cond cc=13 T=-0x100000         # imm19 min
b.al #16                 => BR cc=14 T=+0x10 k=A64_B_COND     # AL: always taken
b.nv #16                 => BR cc=14 T=+0x10 k=A64_B_COND     # NV behaves as AL
bc.eq #8                 => BR cond cc=0 T=+0x8 k=A64_BC_COND
bc.gt #-1048576          => BR cond cc=12 T=-0x100000 k=A64_BC_COND
bc.al #8                 => BR cc=14 T=+0x8 k=A64_BC_COND
cbz w0, #1048572         => BR cond T=+0xffffc k=A64_CBZ
cbnz x30, #-1048576      => BR cond T=-0x100000 k=A64_CBZ
cbz x1, #4               => BR cond T=+0x4 k=A64_CBZ
tbz w1, #0, #32764       => BR cond T=+0x7ffc k=A64_TBZ       # imm14 max
tbnz x2, #63, #-32768    => BR cond T=-0x8000 k=A64_TBZ       # imm14 min
tbnz w3, #31, #0         => BR cond T=+0x0 k=A64_TBZ
.inst 0x74052005         => BR cond T=-0x400 k=A64_CB_REG     # cbgt w5, w5, #-1024 (FEAT_CMPBR)
.inst 0xf4051fe5         => BR cond T=+0x3fc k=A64_CB_REG     # cbgt x5, x5, #1020
.inst 0x74c52005         => BR cond T=-0x400 k=A64_CB_REG     # cbeq w5, w5, #-1024
.inst 0xf4e22002         => BR cond T=-0x400 k=A64_CB_REG     # cbne x2, x2, #-1024
.inst 0x7405e005         => BR cond T=-0x400 k=A64_CBH        # cbhgt w5, w5, #-1024
.inst 0x74e5e005         => BR cond T=-0x400 k=A64_CBH        # cbhne w5, w5, #-1024
.inst 0x7405a005         => BR cond T=-0x400 k=A64_CBB        # cbbgt w5, w5, #-1024
.inst 0x74c5a005         => BR cond T=-0x400 k=A64_CBB        # cbbeq w5, w5, #-1024
.inst 0x751f9fe5         => BR cond T=+0x3fc k=A64_CB_IMM     # cbgt w5, #63, #1020
.inst 0xf5002005         => BR cond T=-0x400 k=A64_CB_IMM     # cbgt x5, #0, #-1024
.inst 0xf5efa005         => BR cond T=-0x400 k=A64_CB_IMM     # cbne x5, #31, #-1024
.inst 0x74000020         => BR cond T=+0x4 k=A64_CB_REG       # cbgt w0, w0, #4
.inst 0x74852005         => OTHER undef k=UNDEF               # CB<cc> register, reserved cc 100
.inst 0x74a52005         => OTHER undef k=UNDEF               # CB<cc> register, reserved cc 101
.inst 0xf5802005         => OTHER undef k=UNDEF               # CB<cc> immediate, reserved cc 100
.inst 0xf405a005         => OTHER undef k=UNDEF               # CBB with sf=1: unallocated
.inst 0xf405e005         => OTHER undef k=UNDEF               # CBH with sf=1: unallocated
.inst 0x74056005         => OTHER undef k=UNDEF               # CB register op 01: unallocated
.inst 0x751fdfe5         => OTHER undef k=UNDEF               # CB immediate with bit 14 set
.inst 0x76000000         => OTHER undef k=UNDEF               # unallocated branch group
.inst 0x56000000         => OTHER undef k=UNDEF               # unallocated branch group
.inst 0x55000000         => OTHER undef k=UNDEF               # conditional branch o1=1, not SPPC
br x3                    => BRI k=A64_BR
br x30                   => BRI k=A64_BR
blr x30                  => BRI link k=A64_BLR +LINK
blr x0                   => BRI link k=A64_BLR
ret                      => BRI ret k=A64_RET +RETURN
ret x5                   => BRI ret k=A64_RET
eret                     => BRI eret k=A64_ERET +ERET
drps                     => OTHER undef k=A64_DRPS
braa x1, x2              => BRI k=A64_BRA +PAC
brab x1, sp              => BRI k=A64_BRA
blraa x3, x4             => BRI link k=A64_BLRA +PAC
blrab x30, x0            => BRI link k=A64_BLRA
braaz x5                 => BRI k=A64_BRA
brabz x6                 => BRI k=A64_BRA
blraaz x7                => BRI link k=A64_BLRA
blrabz x8                => BRI link k=A64_BLRA
retaa                    => BRI ret k=A64_RETA +PAC +RETURN
retab                    => BRI ret k=A64_RETA
eretaa                   => BRI eret k=A64_ERETA +PAC
eretab                   => BRI eret k=A64_ERETA
.inst 0x5500001f         => BRI ret k=A64_RETASPPC +PAC       # retaasppc #0 (FEAT_PAuth_LR)
.inst 0x5520023f         => BRI ret k=A64_RETASPPC            # retabsppc (label 0x44 back)
.inst 0x551fffff         => BRI ret k=A64_RETASPPC            # retaasppc #-262140
.inst 0xd65f0be2         => BRI ret k=A64_RETASPPCR           # retaasppcr x2
.inst 0xd65f0fe3         => BRI ret k=A64_RETASPPCR           # retabsppcr x3
.inst 0xd6ff03e0         => BRI eret k=A64_TEXIT              # texit (FEAT_TEV)
.inst 0xd6ff07e0         => BRI eret k=A64_TEXIT              # texit nb
.inst 0xd65f0001         => OTHER undef k=UNDEF               # RET with op4 != 0
.inst 0xd6000000         => OTHER undef k=UNDEF               # branch (register) unallocated
.inst 0xd7ff0000         => OTHER undef k=UNDEF
svc #0                   => OTHER k=A64_SVC +EXCGEN
hvc #1                   => OTHER k=A64_HVC +EXCGEN
smc #0xffff              => OTHER k=A64_SMC +EXCGEN
brk #0x3e8               => OTHER k=A64_BRK +EXCGEN
hlt #0                   => OTHER k=A64_HLT +EXCGEN
udf #0                   => OTHER undef k=A64_UDF +EXCGEN
udf #0xffff              => OTHER undef k=A64_UDF
.inst 0xd4000000         => OTHER undef k=UNDEF               # exception generation, LL=00
isb                      => ISB k=A64_ISB +BARRIER
isb #3                   => ISB k=A64_ISB
dsb sy                   => OTHER k=A64_DSB +BARRIER
dsb ish                  => OTHER k=A64_DSB
dmb ishld                => OTHER k=A64_DMB +BARRIER
dsb synxs                => OTHER k=A64_DSB
ssbb                     => OTHER k=A64_DSB
pssbb                    => OTHER k=A64_DSB
sb                       => OTHER k=A64_SB +BARRIER
clrex                    => OTHER k=NONE
wfi                      => WFX k=A64_WFI +WFX
wfe                      => WFX k=A64_WFE +WFX
wfit x0                  => WFX k=A64_WFIT
wfet x30                 => WFX k=A64_WFET
tstart x1                => TSTART k=A64_TSTART +TME
tcommit                  => OTHER k=A64_TCOMMIT +TME
tcancel #0x1234          => OTHER k=A64_TCANCEL +TME
ttest x2                 => OTHER k=A64_TTEST +TME
nop                      => OTHER k=NONE
yield                    => OTHER k=NONE
sev                      => OTHER k=NONE
bti c                    => OTHER k=NONE
paciasp                  => OTHER k=NONE
autiasp                  => OTHER k=NONE
msr daifset, #2          => OTHER k=NONE
mrs x0, tpidr_el0        => OTHER k=NONE
sys #0, c7, c5, #0, x0   => OTHER k=NONE
mov x0, x1               => OTHER k=NONE
add x0, x1, #4           => OTHER k=NONE
ldr x0, [x1, #8]         => OTHER k=NONE
stp x29, x30, [sp, #-16]! => OTHER k=NONE
adr x0, #0               => OTHER k=NONE
adrp x0, #4096           => OTHER k=NONE
irg x0, x1               => OTHER k=NONE
csel x0, x1, x2, eq      => OTHER k=NONE
fmov d0, #1.0            => OTHER k=NONE
.inst 0x00010000         => OTHER k=NONE                      # first word above the UDF range
.inst 0xffffffff         => OTHER k=NONE

# ---- DSB/DMB as waypoints ----
# @cfg arch=v9a opts=wfx,dsb
dsb sy                   => DSB k=A64_DSB
dmb ish                  => DSB k=A64_DMB
dsb synxs                => DSB k=A64_DSB
sb                       => OTHER k=A64_SB
isb                      => ISB k=A64_ISB

# ---- WFx not traced as branches ----
# @cfg arch=v9a
wfi                      => OTHER k=A64_WFI +WFX
wfe                      => OTHER k=A64_WFE
wfit x3                  => OTHER k=A64_WFIT

# ---- Armv8.0-A: no pointer authentication, no HBC, no WFxT, no TME, no CMPBR ----
# @cfg arch=v8a opts=wfx
ret                      => BRI ret k=A64_RET
retaa                    => OTHER undef k=UNDEF
braa x1, x2              => OTHER undef k=UNDEF
blraaz x7                => OTHER undef k=UNDEF
eretaa                   => OTHER undef k=UNDEF
bc.eq #8                 => OTHER undef k=UNDEF
b.eq #8                  => BR cond cc=0 T=+0x8 k=A64_B_COND
wfit x0                  => OTHER undef k=UNDEF
wfi                      => WFX k=A64_WFI
tstart x1                => OTHER k=NONE
tcommit                  => OTHER k=NONE
tcancel #1               => OTHER undef k=UNDEF
.inst 0x74052005         => OTHER undef k=UNDEF               # cbgt w5, w5, #-1024
.inst 0x5500001f         => OTHER undef k=UNDEF               # retaasppc #0
.inst 0xd65f0be2         => OTHER undef k=UNDEF               # retaasppcr x2
.inst 0xd6ff03e0         => OTHER undef k=UNDEF               # texit

# ---- Armv8.3-A and later 8.x: PAuth, HBC, WFxT; not the v9 extensions ----
# @cfg arch=v83a opts=wfx
retaa                    => BRI ret k=A64_RETA
braa x1, x2              => BRI k=A64_BRA
bc.ne #-8                => BR cond cc=1 T=-0x8 k=A64_BC_COND
wfet x1                  => WFX k=A64_WFET
tstart x1                => OTHER k=NONE
.inst 0x74052005         => OTHER undef k=UNDEF               # cbgt w5, w5, #-1024
.inst 0x5500001f         => OTHER undef k=UNDEF               # retaasppc #0
.inst 0xd65f0be2         => OTHER undef k=UNDEF               # retaasppcr x2: RETAA with Rm

# ---- OpenCSD 1.8.0, ARCH_V8 (e.g. Cortex-A53) ----
# @cfg ocsd=0x0800 opts=wfx
b.al #16                 => BR cond cc=14 T=+0x10 k=A64_B_COND
bc.eq #8                 => BR cond cc=0 T=+0x8 k=A64_BC_COND
.inst 0x74052005         => BR T=-0x400 k=A64_CB_REG          # cbgt: not conditional for OpenCSD
.inst 0x751f9fe5         => BR T=+0x3fc k=A64_CB_IMM
.inst 0x74852005         => BR T=-0x400 k=A64_CB_REG          # reserved cc decoded as a branch
retaa                    => OTHER undef k=UNDEF
.inst 0x5500001f         => OTHER undef k=UNDEF
wfit x0                  => OTHER undef k=UNDEF
tstart x1                => OTHER k=NONE
cbz x0, #8               => BR cond T=+0x8 k=A64_CBZ

# ---- OpenCSD 1.8.0, ARCH_V8r3 (e.g. Cortex-A55) ----
# @cfg ocsd=0x0803 opts=wfx
retaa                    => BRI ret k=A64_RETA
blraa x3, x4             => BRI link k=A64_BLRA
.inst 0x5500001f         => BRI ret k=A64_RETASPPC
.inst 0xd65f0be2         => BRI ret k=A64_RETASPPCR
.inst 0xd6ff03e0         => BRI eret k=A64_TEXIT
wfit x0                  => OTHER undef k=UNDEF
tstart x1                => OTHER k=NONE

# ---- OpenCSD 1.8.0, ARCH_AA64 (ETE, ARMv8.4+ and ARM-AA64 core names) ----
# @cfg ocsd=0x0864 opts=wfx,dsb
wfit x0                  => WFX k=A64_WFIT
tstart x1                => TSTART k=A64_TSTART
dsb sy                   => DSB k=A64_DSB
dsb synxs                => OTHER k=A64_DSB                   # OpenCSD: not a DSB
