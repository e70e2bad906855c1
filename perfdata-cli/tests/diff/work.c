/* perfdata diff oracle workload: three busy functions; a second argument halves b's work, so two runs differ where perf diff should say. */
#include <stdlib.h>
volatile long s;
__attribute__((noinline)) void a(long n){for(long i=0;i<n;i++)s+=i;}
__attribute__((noinline)) void b(long n){for(long i=0;i<n;i++)s^=i*3;}
__attribute__((noinline)) void c(long n){for(long i=0;i<n;i++)s+=i%7;}
int main(int argc,char**argv){long k=atol(argv[1]);for(int r=0;r<20;r++){a(k);b(k*2/ (argc>2?2:1));c(k/2);}return 0;}
