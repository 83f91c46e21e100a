package kernel

//go:generate go tool bpf2go -cc clang -target bpfel -type cpu_log -type id_slot sched sched.bpf.c -- -O2 -g -Wall -mcpu=v3 -I/usr/include/x86_64-linux-gnu
