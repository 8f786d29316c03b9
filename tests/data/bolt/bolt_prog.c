/* The program of the BOLT end-to-end test (tests/scripts/bolt_e2e.sh): AArch64, no C library,
 * the same output on every run. Its profile has a clear shape: hot() runs 4096 times and takes
 * its rare branch once in 8 calls, cold() runs every 64th iteration, pick() dispatches through
 * a jump table, and a static mix() in each of two files gives BOLT's local names mix/1, mix/2. */
typedef unsigned long u64;

u64 mix_a(u64 x);
u64 mix_b(u64 x);

static long sys(long nr, long a, long b, long c)
{
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}

__attribute__((noinline)) static u64 cold(u64 x)
{
    return (x << 3) ^ mix_b(x);
}

__attribute__((noinline)) u64 hot(u64 x)
{
    if ((x & 7) == 0)
        return x ^ 6;
    return x + (x >> 1);
}

__attribute__((noinline)) u64 pick(u64 x)
{
    switch (x % 6) {
    case 0: return x * 3;
    case 1: return x + 11;
    case 2: return x ^ 0x55;
    case 3: return x - 1;
    case 4: return mix_a(x);
    default: return x >> 2;
    }
}

__attribute__((noinline)) static void print_hex(u64 v)
{
    char buf[17];
    for (int i = 15; i >= 0; i--) {
        unsigned d = v & 15;
        buf[i] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v >>= 4;
    }
    buf[16] = '\n';
    sys(64, 1, (long)buf, 17);
}

void _start(void)
{
    u64 sum = 0;
    for (u64 i = 4096; i; i--) {
        sum += hot(i);
        if ((i & 63) == 0)
            sum += cold(i);
        if ((i & 3) == 0)
            sum += pick(i);
    }
    print_hex(sum);
    sys(93, 0, 0, 0);
    for (;;)
        ;
}
