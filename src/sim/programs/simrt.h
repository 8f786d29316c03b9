/* Shared declarations of the simulated user programs (compiled freestanding for AArch64). */
#ifndef SIMRT_H
#define SIMRT_H

typedef int (*sim_fn)(int);

/* Function pointers filled in by the simulated loader; calls through them are indirect
 * branches whose targets the simulator picks among the cb_* functions of the calling image
 * and the api_* functions of the libraries mapped into the process. */
extern sim_fn volatile sim_api_slot;
extern volatile int sim_sink;

void sim_init(void);
int sim_work_step(void);
int thread_work_step(void);
void sim_lib_opened(void);
void sim_lib_closing(void);

#define SIM_EXPORT __attribute__((visibility("default")))
#define SIM_NOINLINE __attribute__((noinline))

#endif
