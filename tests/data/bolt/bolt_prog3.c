/* Third file of the BOLT end-to-end test program: a static mix() of the same name. */
typedef unsigned long u64;

__attribute__((noinline)) static u64 mix(u64 x)
{
    return (x ^ (x >> 5)) * 3;
}

__attribute__((noinline)) u64 mix_a(u64 x)
{
    return mix(x) - 2;
}
