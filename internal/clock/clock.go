// Package clock gives the runtime one notion of time: Time, nanoseconds since
// job start, read from a Clock. The pure packages never read a clock; drivers
// pass Time in. Manual is a clock for tests and the simulator.
package clock

import "time"

// Time is nanoseconds since the job's start.
type Time int64

// Duration converts to a time.Duration.
func (t Time) Duration() time.Duration { return time.Duration(t) }

// Clock reads the current Time. Implementations say whether they are safe for
// concurrent use.
type Clock interface {
	Now() Time
}

// Manual is a Clock that moves only when told. Not safe for concurrent use.
type Manual struct{ T Time }

func (m *Manual) Now() Time               { return m.T }
func (m *Manual) Advance(d time.Duration) { m.T += Time(d) }
