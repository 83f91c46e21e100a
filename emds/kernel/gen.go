package kernel

//go:generate go tool bpf2go -cc clang -target bpfel -type slot -type waits -type cpu_state -type intf_key -type intf_val -type slice_top -type task_state sched sched.bpf.c -- -O2 -g -Wall -I/usr/include/x86_64-linux-gnu
