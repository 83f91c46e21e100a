package main

// Window info hints (MPI-4.1 section 12.2.7): MPI_Win_get_info returns the
// standard's window hints with their current values. Each starts at the
// standard's default, and takes the value a program gives it at creation
// or with MPI_Win_set_info; other keys are ignored (not returned). bcsmpi
// acts on alloc_shared_noncontig at creation only (rmashared.go); the
// others it accepts and reports without changing how it works (each only
// lets an implementation assume more).

// winHintKeys are the window hints, in the order MPI_Win_get_info returns
// them, with their defaults; alloc_shared_noncontig only on shared windows.
var winHintKeys = []struct{ key, def string }{
	{"no_locks", "false"},
	{"accumulate_ordering", "rar,raw,war,waw"},
	{"accumulate_ops", "same_op_no_op"},
	{"mpi_accumulate_granularity", "0"},
	{"same_size", "false"},
	{"same_disp_unit", "false"},
	{"alloc_shared_noncontig", "false"},
}

// initHints sets w.hints to the defaults, then to the values infoH gives
// (checked by the caller; hInfoNull: none).
func (w *window) initHints(infoH uintptr) {
	w.hints = w.hints[:0]
	for _, k := range winHintKeys {
		if k.key == "alloc_shared_noncontig" && w.flavor != flavorShared {
			continue
		}
		w.hints = append(w.hints, k.key, k.def)
	}
	w.setHints(infoH)
}

// setHints takes the values of the window hints infoH holds.
func (w *window) setHints(infoH uintptr) {
	if infoH == hInfoNull {
		return
	}
	e, rc := info("", infoH, false)
	if rc != 0 {
		return
	}
	for i := 0; i < len(w.hints); i += 2 {
		if j := e.find(w.hints[i]); j >= 0 {
			w.hints[i+1] = e.vals[j]
		}
	}
}

// hintInfo is a new info object holding w's hints.
func (w *window) hintInfo() uintptr {
	var keys, vals []string
	for i := 0; i < len(w.hints); i += 2 {
		keys, vals = append(keys, w.hints[i]), append(vals, w.hints[i+1])
	}
	return newInfo(keys, vals)
}
