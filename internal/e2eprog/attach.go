package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// Scenarios about who may attach as a rank (issue 9 §3) and what a rank may
// write into shared memory (§2).

// preInit runs the scenarios that must act before (or instead of) MPI_Init;
// it reports whether it ran one.
func preInit(args []string) bool {
	switch args[0] {
	case "attach-child": // started by a rank, with the rank's environment
		attachChild(len(args) > 1 && args[1] == "wait")
	case "spawn-before-init": // the rank starts a child before its own Init
		spawnBeforeInit()
	default:
		return false
	}
	return true
}

// regionFDs lists this process's descriptors open on a bcsmpi region: a
// memfd named bcs-… (or, where memfd_create is refused, an unnamed file in
// /dev/shm).
func regionFDs() []string {
	var out []string
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && (strings.HasPrefix(l, "/memfd:bcs-") || strings.HasPrefix(l, unix.ShmDir+"/")) {
			out = append(out, filepath.Base(fd)+" -> "+l)
		}
	}
	return out
}

// attachChild reports what it inherited and what MPI_Init says; with wait it
// first waits for a line on stdin (its parent's go-ahead).
func attachChild(wait bool) {
	if wait {
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	fmt.Printf("child: region descriptors: %d %v\n", len(regionFDs()), regionFDs())
	mpi.SetErrhandler(mpi.ErrorsReturn)
	if err := mpi.Init(); err != nil {
		fmt.Printf("child: MPI_Init refused: %v\n", err)
		return
	}
	fmt.Println("child: MPI_Init succeeded")
	mpi.Finalize()
}

// runChild runs this program as attach-child with the rank's environment and
// prints its output.
func runChild(cmd *exec.Cmd) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	fmt.Print(out.String())
	fmt.Printf("child exit: %v\n", err)
}

// execChild: after MPI_Init, rank 0 executes another MPI program (this one)
// with its own environment; the region must not be inherited, and that
// program's MPI_Init must fail naming the rank.
func execChild() {
	if w.Rank() == 0 {
		runChild(exec.Command(os.Args[0], "attach-child"))
	}
}

// spawnBeforeInit: rank 0 starts a child before its own MPI_Init, so the
// child inherits the region's descriptor; the rank attaches first, and the
// child's MPI_Init must be refused: attachment is once per rank.
func spawnBeforeInit() {
	var child *exec.Cmd
	var goAhead *os.File
	if os.Getenv(jobenv.VarRank) == "0" {
		child = exec.Command(os.Args[0], "attach-child", "wait")
		r, wr, err := os.Pipe()
		if err != nil {
			check(err)
		}
		child.Stdin, goAhead = r, wr
		var out bytes.Buffer
		child.Stdout, child.Stderr = &out, &out
		check(child.Start())
		r.Close()
		defer func() {
			fmt.Print(out.String())
		}()
	}
	check(mpi.Init())
	w = mpi.World()
	if child != nil {
		fmt.Fprintln(goAhead, "go")
		goAhead.Close()
		err := child.Wait()
		fmt.Printf("rank 0 is process %d; child exit: %v\n", os.Getpid(), err)
	}
	mpi.Barrier(w)
	check(mpi.Finalize())
}

// impersonate: rank 0 maps its node's region a second time, writes rank 1's
// number into its own control page and posts a send as rank 1 to rank 1,
// which waits for a message from any source. The job must abort naming rank
// 0; before issue 9 the message arrived as from rank 1 (and across nodes the
// agent panicked).
func impersonate() {
	if w.Rank() != 0 {
		st, err := mpi.Recv(w, make([]byte, 8), mpi.AnySource, 5)
		check(err)
		fmt.Printf("rank %d received a message from rank %d\n", w.Rank(), st.Source)
		return
	}
	fd, _ := strconv.Atoi(os.Getenv(jobenv.VarShmFD))
	local, _ := strconv.Atoi(os.Getenv(jobenv.VarLocalRank))
	n, err := unix.FileSize(fd)
	check(err)
	mem, err := unix.Map(fd, int(n))
	check(err)
	region, err := shm.Attach(mem)
	check(err)
	b := region.Block(local)
	b.SetWorldRank(1)
	d := proto.Descriptor{Kind: proto.KindSend, Inline: true, Rank: 1, Peer: 1, Tag: 5, Seq: 1 << 40, Len: 8, PostSlice: region.Slice()}
	for !b.Post(d, []byte("fakemsg!")) {
	}
	// Post nothing else for a while (the agent drains the forged send alone),
	// then wait for a message that never comes: the job must abort first.
	time.Sleep(2 * time.Second)
	mpi.Recv(w, make([]byte, 8), 1, 99)
}
