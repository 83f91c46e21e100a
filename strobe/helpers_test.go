package strobe

import "github.com/bcsmpi/bcsmpi/internal/proto"

func proto0(n int) proto.NodeID      { return proto.NodeID(n) }
func sliceID(k uint64) proto.SliceID { return proto.SliceID(k) }
