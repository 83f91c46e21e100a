package launch

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/pmi"
)

// rendezvous is bcsrun's port where the bcsds meet when no launcher serves
// them PMI: over ssh, and under Slurm without PMI-2 (slurm_mpi = none,
// srun --mpi=none). One listener carries two kinds of connection, told apart
// by their first line: a bcsd's PMI-2 conversation with the job's PMI
// server (first line pmiAuth: its node and its proof of the job's secret,
// each node admitted once), and its control connection (ctlHello,
// control.go).
type rendezvous struct {
	ln      net.Listener
	srv     *pmi.Server
	served  sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool
	claimed []bool
}

// startRendezvous serves the job's bcsds on ln until close.
func startRendezvous(ln net.Listener, a *across, ctl *ctlServer, stderr io.Writer) (*rendezvous, error) {
	srv, err := pmi.NewServer(pmi.ServerConfig{Size: a.hosts, JobID: a.jobID})
	if err != nil {
		return nil, err
	}
	r := &rendezvous{ln: ln, srv: srv, conns: map[net.Conn]bool{}, claimed: make([]bool, a.hosts)}
	r.served.Add(1)
	go func() {
		defer r.served.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			r.conns[c] = true
			r.mu.Unlock()
			r.served.Add(1)
			go func() {
				defer r.served.Done()
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				line, err := readLine(c, ctlHelloLimit)
				c.SetReadDeadline(time.Time{})
				if err == nil && strings.HasPrefix(line, ctlHelloWord+" ") {
					if err := ctl.serve(c, line); err != nil {
						fmt.Fprintf(stderr, "bcsrun: PMI port: refused a control connection from %s: %v\n", c.RemoteAddr(), err)
						c.Close()
					}
					return
				}
				node := 0
				if err == nil {
					node, err = a.admit(line, r.claimed, &r.mu)
				}
				if err != nil {
					// Someone reached the PMI port and is not one of the
					// job's bcsds, or a bcsd of this job was refused: say
					// so; a refused node (bad node, duplicate claim) would
					// leave the others waiting in the fence, so it fails
					// the job.
					fmt.Fprintf(stderr, "bcsrun: PMI port: refused a connection from %s: %v\n", c.RemoteAddr(), err)
					c.Close()
					if errors.Is(err, errJobNode) {
						srv.Close()
					}
					return
				}
				srv.Serve(c, node)
			}()
		}
	}()
	return r, nil
}

// close stops accepting, ends every connection, waits for their servers,
// and fails what still waits on the PMI server.
func (r *rendezvous) close() {
	r.ln.Close()
	r.mu.Lock()
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.served.Wait()
	r.srv.Close()
}
