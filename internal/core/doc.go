// Package core is the pure state machine of one BCS-MPI node: it combines the
// strobe follower (microphase order) with the replicated scheduler (MSM) and the
// restart policy (when completions are published to ranks).
//
// A driver feeds it the master's messages in order:
//
//	DEM(k)                 → slice k begins: completions to publish now (restart
//	                         policy "slice"); the driver then drains its rings
//	MSM(k, all, status)    → every node's descriptors of this slice (node order)
//	                         and every rank's status byte in; the plan out:
//	                         matches, chunks to move, completions
//	TX(k)                  → transmission starts; the driver moves the plan's chunks
//	EndSlice(k)            → completions to publish now (restart policy "early")
//
// # Vocabulary
//
// A slice has three steps, and each has one name everywhere: the microphase
// names of the BCS papers, which the README, docs/design.md and the EMDS
// columns already use.
//
//	step               master (nicthread.Nodes)  wire (proto.Msg*)    agent (nicthread.Agent)  core (Node)  strobe phase  EMDS
//	1 descriptor exch. DEM                       MsgDEM, MsgDEMDone   DEM                      DEM          PhaseDEM      GTDEM, USRDEM; LTDEM, NP2PDEM, NCOLLDEM
//	2 scheduling       MSM                       MsgMSM, MsgMSMDone   MSM                      MSM          PhaseMSM      GTMSM, USRMSM; LTMSM, NP2PMSM, NCOLLMSM
//	3 transmission     TX                        MsgTX, MsgTXDone     TX                       TX           PhaseTX       GTTS, USRTS; LTTS
//	  (end of slice)   —                         —                    —                        EndSlice     PhaseIdle     —
//
// The master sends MsgX to start step X and each agent answers MsgXDone. The
// strobe (strobe.Master.Strobe, the paper's "slice k begins") is not a step:
// it is the master's decision to start slice k, and its broadcast is MsgDEM.
// DEM is named for what the step delivers (every node's descriptors), though
// within it each agent only drains its own rings and the master gathers:
// the all-gather is completed by MsgMSM, which carries the gathered set into
// step 2. The EMDS names of step 3 say TS (time slice), not TX: they are the
// paper's Table 1 names and the columns of the dump files, which bcsplot,
// bcsreport and the tests read; TX is the slice's last step, so "done with TX"
// and "done with the slice" are the same instant.
//
// Every node keeps an identical scheduler and feeds it the identical DEM set,
// so every node computes the identical plan: the DEM all-gather is the only
// exchange MSM needs. This replaces the paper's partial exchange plus per-pair
// negotiation; the price is that each node sees every descriptor
// (proto.DescriptorSize: 72 bytes each), which is cheap at the node counts a
// strobe can keep in step, and buys a global view for free (deadlock
// detection, collective mismatch checks).
//
// Rules enforced here (docs/design.md §3): rule 1, nothing posted during slice k is
// exchanged in slice k (MSM rejects a descriptor whose PostSlice ≥ k); rule 2,
// microphases run in order (strobe.Follower); rule 5, completions of slice k are
// published at the strobe of k+1 under the default policy, at the end of slice
// k's transmission under the early-restart policy.
//
// Deadlock detection (issue 9): a deadlock is a fact about the posted state,
// not a silence. MSM declares one only when no rank can make progress: every
// rank is finalized or exited without MPI, or blocked in a call, having looked
// at every completion published to it, with an operation the scheduler holds as
// incomplete; at least one is blocked; and nothing was exchanged, moved or
// completed. A rank still starting (alive, not yet at MPI_Init), woken (a
// completion it has not consumed: descheduled, paging, stopped) or running can
// still post or go on, so the job is not deadlocked however long that lasts.
// The agents compute each rank's status byte (proto.StatusRunning and the
// others), the launcher tells them which processes have exited; the core only
// reads the bytes. DeadlockSlices consecutive such slices (at least two, as a
// post made during slice k is exchanged in k+1) are a guard, not the criterion;
// time is counted in slices the master ran, never read from a clock.
//
// Deterministic mode (scheduler/doc.go): the same facts mark a quiescent
// point. When the previous slice counted as stuck and this one has exchanged
// nothing and no rank can progress, MSM runs with SetView's force, so held
// wildcards and Iprobes are answered with what has been posted; if that
// answers nothing, every rank waiting in a Test-family call (its status byte
// is proto.Settling) gets a proto.KindRelease completion; only when neither
// applies does the stuck count go on towards a deadlock report. The count of
// stuck slices is kept in this mode even with deadlock detection off.
//
// # The only way into the protocol
//
// This package is the only importer of package scheduler (docs/design.md
// §4; layers_test.go fails on any other, test files included). Its output
// is its own names (api.go): Plan, Match, Fold, Write and CollError are
// package internal/plan's types, which the scheduler fills in; SchedConfig,
// DefaultSchedConfig, DetStats and CheckDescriptor pass the scheduler's
// configuration, counters and descriptor checks through. Drivers
// (nicthread, internal/sim, internal/launch), configs and the benchmarks
// use these names.
//
// No clock, goroutine or I/O. Not safe for concurrent use.
package core
