/* Second file of the BOLT end-to-end test program: another static mix(). */
typedef unsigned long u64;

__attribute__((noinline)) static u64 mix(u64 x)
{
    return x * 0x9e3779b97f4a7c15ul >> 7;
}

__attribute__((noinline)) u64 mix_b(u64 x)
{
    return mix(x) + 1;
}
