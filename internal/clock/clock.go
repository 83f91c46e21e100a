// Package clock gives the runtime one notion of time: Time, nanoseconds since
// job start. The pure packages (strobe, scheduler, internal/core) never read a
// clock; their drivers pass Time in — nicthread reads it from unix.Now, a
// simulator from its own event loop.
//
// Rejected: a Clock interface with a real and a manual implementation. The
// drivers that would read it call unix.Now and unix.SleepUntil on a locked
// thread, where an interface call buys nothing, and a simulator keeps its own
// time in its event queue; the interface was used nowhere and was removed.
package clock

import "time"

// Time is nanoseconds since the job's start.
type Time int64

// Duration converts to a time.Duration.
func (t Time) Duration() time.Duration { return time.Duration(t) }
