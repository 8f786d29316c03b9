/* /usr/bin/simreal: a real program for the workload-real scenario. It is linked (PIE, BIND_NOW)
 * against Debian's AArch64 libc.so.6 and libm.so.6, which the simulator loads at run time from
 * the libc6-arm64-cross package, and starts through the real dynamic linker. Each work step
 * runs one of its tasks; the tasks call into libc and libm the way ordinary programs do
 * (formatting, parsing, sorting, searching, regular expressions, time, wide characters,
 * memory, mathematics), through the PLT, with callbacks libc calls back through pointers; and
 * like a scripting language it calls builtins, libc and libm functions bound by name.
 * The simulator does not simulate data: which way each branch of libc goes is its random
 * (but always real and returning) walk through the code; this file decides which entry points
 * the walk starts from. Compiled freestanding: the declarations below are libc's. */
#include "simrt.h"

typedef unsigned long size_t;
typedef long ssize_t;
typedef long time_t;
typedef int wchar_t;
typedef struct FILE FILE;
struct tm {
    int tm_sec, tm_min, tm_hour, tm_mday, tm_mon, tm_year, tm_wday, tm_yday, tm_isdst;
    long tm_gmtoff;
    const char *tm_zone;
};
typedef struct {
    long pad[8];
} regex_t;
typedef struct {
    int so, eo;
} regmatch_t;
typedef struct {
    char pad[64];
} mbstate_t;
struct timespec {
    long tv_sec, tv_nsec;
};

int printf(const char *, ...);
int snprintf(char *, size_t, const char *, ...);
int sprintf(char *, const char *, ...);
int sscanf(const char *, const char *, ...);
int puts(const char *);
int fputs(const char *, FILE *);
size_t fwrite(const void *, size_t, size_t, FILE *);
int fflush(FILE *);
int fprintf(FILE *, const char *, ...);
FILE *fopen(const char *, const char *);
FILE *fmemopen(void *, size_t, const char *);
char *fgets(char *, int, FILE *);
int fclose(FILE *);
void *malloc(size_t);
void *calloc(size_t, size_t);
void *realloc(void *, size_t);
void free(void *);
int posix_memalign(void **, size_t, size_t);
size_t strlen(const char *);
int strcmp(const char *, const char *);
int strncmp(const char *, const char *, size_t);
int strcasecmp(const char *, const char *);
char *strchr(const char *, int);
char *strrchr(const char *, int);
char *strstr(const char *, const char *);
char *strtok_r(char *, const char *, char **);
char *strdup(const char *);
size_t strspn(const char *, const char *);
size_t strcspn(const char *, const char *);
char *strpbrk(const char *, const char *);
char *stpcpy(char *, const char *);
void *memcpy(void *, const void *, size_t);
void *memmove(void *, const void *, size_t);
void *memset(void *, int, size_t);
int memcmp(const void *, const void *, size_t);
void *memchr(const void *, int, size_t);
long strtol(const char *, char **, int);
unsigned long strtoul(const char *, char **, int);
double strtod(const char *, char **);
int atoi(const char *);
void qsort(void *, size_t, size_t, int (*)(const void *, const void *));
void *bsearch(const void *, const void *, size_t, size_t, int (*)(const void *, const void *));
int regcomp(regex_t *, const char *, int);
int regexec(const regex_t *, const char *, size_t, regmatch_t *, int);
void regfree(regex_t *);
time_t time(time_t *);
struct tm *localtime_r(const time_t *, struct tm *);
struct tm *gmtime_r(const time_t *, struct tm *);
size_t strftime(char *, size_t, const char *, const struct tm *);
time_t mktime(struct tm *);
int clock_gettime(int, struct timespec *);
char *getenv(const char *);
int setenv(const char *, const char *, int);
int rand_r(unsigned *);
long random(void);
void srandom(unsigned);
int fnmatch(const char *, const char *, int);
char *setlocale(int, const char *);
size_t mbstowcs(wchar_t *, const char *, size_t);
size_t wcstombs(char *, const wchar_t *, size_t);
size_t wcslen(const wchar_t *);
int towupper(int);
size_t mbrtowc(wchar_t *, const char *, size_t, mbstate_t *);
void *tsearch(const void *, void **, int (*)(const void *, const void *));
void *tfind(const void *, void *const *, int (*)(const void *, const void *));
int getpid(void);
int sched_yield(void);
double sin(double);
double cos(double);
double exp(double);
double log(double);
double pow(double, double);
double sqrt(double);
double atan2(double, double);
double fmod(double, double);
double lgamma(double);
double erf(double);
double tanh(double);
double cbrt(double);
double hypot(double, double);
double log1p(double);
double expm1(double);

extern FILE *stdout;

sim_fn volatile sim_api_slot;
volatile int sim_sink;
static unsigned state = 12345;
static char line[256];

SIM_NOINLINE int cb_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

SIM_NOINLINE int cb_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int task_format(int v)
{
    int n = snprintf(line, sizeof line, "%d %5.2f %-8s %#x %lld|", v, v * 0.25, "simreal", v,
                     (long long)v * 1000003);
    n += sprintf(line + 64, "%e %g %c", (double)v / 7, (double)v * 1e-3, 'a' + (v & 15));
    printf("%s\n", line);
    fprintf(stdout, "%08x %s\n", (unsigned)v, line + 64);
    fflush(stdout);
    return n;
}

static int task_parse(int v)
{
    char *end;
    long a = strtol("  -12345xyz", &end, 10);
    unsigned long b = strtoul("0x7fff", &end, 16);
    double d = strtod("3.14159e2", &end);
    int x = 0, y = 0;
    sscanf("17 42", "%d %d", &x, &y);
    return (int)(a + (long)b + (long)d) + atoi("99") + x + y + v;
}

static int task_strings(int v)
{
    char buf[128], *save = 0;
    stpcpy(stpcpy(buf, "alpha,beta;gamma delta"), ",epsilon");
    int n = 0;
    for (char *t = strtok_r(buf, ",; ", &save); t; t = strtok_r(0, ",; ", &save))
        n += (int)strlen(t) + (strchr(t, 'a') != 0) + (strrchr(t, 'e') != 0);
    n += (int)strspn("aaabbb", "a") + (int)strcspn("hello world", " ");
    n += strstr("needle in a haystack", "hay") != 0;
    n += strpbrk("simulate", "xyzu") != 0;
    n += strcasecmp("ETMKIT", "etmkit") + strncmp("abcdef", "abcxyz", 3);
    char *dup = strdup(line);
    n += memcmp(dup, line, 16) + (memchr(dup, ' ', 32) != 0);
    memmove(dup + 1, dup, 8);
    free(dup);
    return n + v;
}

static int task_sort(int v)
{
    int a[32];
    for (int i = 0; i < 32; i++)
        a[i] = rand_r(&state) % 1000;
    qsort(a, 32, sizeof a[0], cb_cmp_int);
    int key = a[v & 31];
    int *hit = bsearch(&key, a, 32, sizeof a[0], cb_cmp_int);
    static const char *words[] = {"pear", "apple", "fig", "kiwi", "banana", "cherry"};
    const char *w[6];
    memcpy(w, words, sizeof w);
    qsort(w, 6, sizeof w[0], cb_cmp_str);
    return (hit ? *hit : 0) + (int)strlen(w[0]);
}

static int task_regex(int v)
{
    regex_t re;
    regmatch_t m[3];
    int n = 0;
    if (regcomp(&re, "([a-z]+)-([0-9]+)", 1) == 0) {
        n = regexec(&re, "item-42 other-7", 3, m, 0) == 0 ? m[1].eo : -1;
        regfree(&re);
    }
    return n + fnmatch("*.c", "simreal.c", 0) + v;
}

static int task_time(int v)
{
    time_t t = time(0) + v;
    struct tm tm;
    struct timespec ts;
    localtime_r(&t, &tm);
    strftime(line, sizeof line, "%Y-%m-%d %H:%M:%S %a %b %j", &tm);
    gmtime_r(&t, &tm);
    clock_gettime(1, &ts);
    return (int)mktime(&tm) + (int)ts.tv_nsec + (int)strlen(line);
}

static int task_memory(int v)
{
    void *p[8];
    for (int i = 0; i < 8; i++)
        p[i] = malloc((size_t)(16 << (i & 7)) + (size_t)v);
    p[3] = realloc(p[3], 4096);
    void *q = calloc(17, 33);
    void *al = 0;
    posix_memalign(&al, 64, 256);
    for (int i = 0; i < 8; i++) {
        memset(p[i], i, 16);
        free(p[i]);
    }
    free(q);
    free(al);
    return v + 1;
}

static int task_wide(int v)
{
    wchar_t ws[64];
    mbstate_t st;
    memset(&st, 0, sizeof st);
    setlocale(6, "C.UTF-8");
    size_t n = mbstowcs(ws, "wide chars \xc3\xa9t\xc3\xa9", 64);
    wchar_t wc;
    mbrtowc(&wc, "\xe2\x82\xac", 3, &st);
    for (size_t i = 0; i < n && i < 64; i++)
        ws[i] = towupper(ws[i]);
    return (int)wcstombs(line, ws, sizeof line) + (int)wcslen(ws) + wc + v;
}

static int task_search(int v)
{
    void *root = 0;
    static int keys[16];
    for (int i = 0; i < 16; i++) {
        keys[i] = (v * 31 + i * 17) & 255;
        tsearch(&keys[i], &root, cb_cmp_int);
    }
    return tfind(&keys[v & 15], &root, cb_cmp_int) != 0;
}

static int task_env(int v)
{
    setenv("SIMREAL", "1", 1);
    const char *e = getenv("SIMREAL");
    srandom((unsigned)v);
    return (e ? *e : 0) + (int)random() + getpid();
}

static int task_math(int v)
{
    double x = v * 0.001 + 0.5;
    double r = sin(x) + cos(x) + exp(x) + log(x + 1) + pow(x, 1.5) + sqrt(x) + atan2(x, 2.0);
    r += fmod(x * 10, 3) + lgamma(x + 1) + erf(x) + tanh(x) + cbrt(x) + hypot(x, 3);
    r += log1p(x) + expm1(x);
    return (int)(r * 100);
}

static int task_io(int v)
{
    char buf[128];
    FILE *f = fmemopen(buf, sizeof buf, "w+");
    if (!f) return v;
    fputs("first line\nsecond line\n", f);
    fwrite(line, 1, 16, f);
    fflush(f);
    int n = fgets(buf, 32, f) != 0;
    fclose(f);
    puts("io done");
    return n + v;
}

/* the interpreter's builtins: libc and libm functions bound by name (simreal_builtins.list);
 * a script calls them through the table, as a scripting language calls its C bindings */
extern void (*const simreal_builtins[])(void);
extern const unsigned long simreal_nbuiltins;

static int task_builtins(int v)
{
    for (int i = 0; i < 4; i++) {
        void (*f)(void) = simreal_builtins[(unsigned)(v + i * 7919) % simreal_nbuiltins];
        f();
    }
    return v;
}

static sim_fn const tasks[] = {task_format, task_parse,  task_strings, task_sort,   task_regex,
                               task_time,   task_memory, task_wide,    task_search, task_env,
                               task_math,   task_io,     task_builtins};

void sim_init(void)
{
    state = 7;
}

void sim_lib_opened(void) {}

void sim_lib_closing(void) {}

int sim_work_step(void)
{
    int acc = (int)state;
    sim_fn f = tasks[state % (sizeof tasks / sizeof tasks[0])];
    acc += f(acc);
    acc += task_builtins(acc); /* and a line of the script */
    state = state * 1103515245u + 12345u;
    sim_sink = acc;
    return acc;
}

int thread_work_step(void)
{
    return sim_work_step() + sched_yield();
}
