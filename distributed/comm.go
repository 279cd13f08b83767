package distributed

import (
	"fmt"
	"time"
)

// Traffic is what a Comm has moved and how long it took, summed since it
// was made. Bytes are payload bytes this rank handed to or got from the
// transport, counted by the pattern of the operation rather than by what
// MPI's algorithms put on the wire:
//
//	all-reduce       sends and receives the buffer once (size > 1)
//	broadcast        the root sends the buffer to each other rank; the others receive it once
//	gather           a non-root sends its part; the root receives every other rank's part
//	send / receive   the message (also a receive from any rank)
//	ring exchange    sends the buffer to each distinct neighbour and receives each neighbour's
//
// A job of one process moves nothing.
type Traffic struct {
	BytesSent, BytesReceived int64
	Seconds                  float64 // wall time inside communication calls
}

// Sub returns t - u, the traffic between two readings.
func (t Traffic) Sub(u Traffic) Traffic {
	return Traffic{t.BytesSent - u.BytesSent, t.BytesReceived - u.BytesReceived, t.Seconds - u.Seconds}
}

// Comm is a communicator: the operations the distributed optimizers use,
// on float32 buffers, over a Transport, metered (Traffic). It is not safe
// for concurrent use; MPI collectives must be called by every rank in the
// same order anyway.
type Comm struct {
	t       Transport
	traffic Traffic
}

// NewComm returns the communicator over t.
func NewComm(t Transport) *Comm { return &Comm{t: t} }

// Rank is this process's number, from 0; Size the number of processes.
func (c *Comm) Rank() int { return c.t.Rank() }

// Size is the number of processes of the job.
func (c *Comm) Size() int { return c.t.Size() }

// Traffic returns what has been moved so far.
func (c *Comm) Traffic() Traffic { return c.traffic }

const f32 = 4 // bytes per float32

// timed runs op, adding its time and the bytes given to the traffic. An
// error names the operation, what, and the peer rank unless it is -1
// (formatted only then: sends and receives are on every step's path).
func (c *Comm) timed(what string, peer, sent, recv int, op func() error) error {
	start := time.Now()
	err := op()
	c.traffic.Seconds += time.Since(start).Seconds()
	if err != nil {
		if peer >= 0 {
			what = fmt.Sprintf("%s %d", what, peer)
		}
		return fmt.Errorf("rank %d: %s: %w", c.Rank(), what, err)
	}
	c.traffic.BytesSent += int64(sent) * f32
	c.traffic.BytesReceived += int64(recv) * f32
	return nil
}

func (c *Comm) checkRank(what string, r int) error {
	if r < 0 || r >= c.Size() {
		return fmt.Errorf("rank %d: %s: rank %d out of range [0,%d)", c.Rank(), what, r, c.Size())
	}
	return nil
}

func errNoPeer(r int) error {
	return fmt.Errorf("a job of one process has no rank %d to talk to", r)
}

// Barrier returns when every rank has called it.
func (c *Comm) Barrier() error {
	return c.timed("barrier", -1, 0, 0, c.t.Barrier)
}

// AllReduceSum replaces buf on every rank with the sum over the ranks.
func (c *Comm) AllReduceSum(buf []float32) error {
	if len(buf) == 0 || c.Size() == 1 {
		return nil
	}
	return c.timed("all-reduce", -1, len(buf), len(buf), func() error { return c.t.AllReduceSum(buf) })
}

// AllReduceMean replaces buf on every rank with the mean over the ranks:
// the sum, then divided by Size on each rank, so every rank ends with the
// same bits.
func (c *Comm) AllReduceMean(buf []float32) error {
	if err := c.AllReduceSum(buf); err != nil {
		return err
	}
	if n := c.Size(); n > 1 {
		inv := 1 / float32(n)
		for i := range buf {
			buf[i] *= inv
		}
	}
	return nil
}

// Broadcast copies root's buf into every rank's buf.
func (c *Comm) Broadcast(root int, buf []float32) error {
	if err := c.checkRank("broadcast", root); err != nil {
		return err
	}
	if len(buf) == 0 || c.Size() == 1 {
		return nil
	}
	sent, recv := 0, len(buf)
	if c.Rank() == root {
		sent, recv = len(buf)*(c.Size()-1), 0
	}
	return c.timed("broadcast", -1, sent, recv, func() error { return c.t.Broadcast(root, buf) })
}

// Send sends buf to rank to under tag; it returns when buf may be reused.
func (c *Comm) Send(to, tag int, buf []float32) error {
	if err := c.checkRank("send", to); err != nil {
		return err
	}
	if len(buf) == 0 {
		return nil
	}
	return c.timed("send to", to, len(buf), 0, func() error { return c.t.Send(to, tag, buf) })
}

// Recv receives into buf the message rank from sent under tag.
func (c *Comm) Recv(from, tag int, buf []float32) error {
	if err := c.checkRank("receive", from); err != nil {
		return err
	}
	if len(buf) == 0 {
		return nil
	}
	return c.timed("receive from", from, 0, len(buf), func() error { return c.t.Recv(from, tag, buf) })
}

// RecvAny receives into buf the first message under tag from any rank,
// and returns the rank that sent it.
func (c *Comm) RecvAny(tag int, buf []float32) (from int, err error) {
	from = -1
	err = c.timed("receive from any rank", -1, 0, len(buf), func() error {
		var err error
		from, err = c.t.RecvAny(tag, buf)
		return err
	})
	return from, err
}

// Gather places every rank's src, in rank order, into root's dst, which
// must hold Size()·len(src) values; dst is not used on other ranks.
func (c *Comm) Gather(root int, dst, src []float32) error {
	if err := c.checkRank("gather", root); err != nil {
		return err
	}
	if c.Rank() == root && len(dst) != c.Size()*len(src) {
		return fmt.Errorf("rank %d: gather: destination holds %d values, want %d×%d", c.Rank(), len(dst), c.Size(), len(src))
	}
	if len(src) == 0 {
		return nil
	}
	if c.Size() == 1 {
		copy(dst, src)
		return nil
	}
	sent, recv := len(src), 0
	if c.Rank() == root {
		sent, recv = 0, len(src)*(c.Size()-1)
	}
	return c.timed("gather", -1, sent, recv, func() error { return c.t.Gather(root, dst, src) })
}

// Neighbours are the ranks before and after this one on the ring
// 0, 1, …, Size-1, 0.
func (c *Comm) Neighbours() (left, right int) {
	n := c.Size()
	return (c.Rank() + n - 1) % n, (c.Rank() + 1) % n
}

// Ring tags: the two directions of RingExchange. Tags below 1000 are
// free for callers.
const (
	tagRingRight = 1000 + iota
	tagRingLeft
)

// RingExchange sends buf to both ring neighbours and receives theirs into
// fromLeft and fromRight (each len(buf); with two ranks both neighbours
// are the same rank and fromRight is a copy of fromLeft; with one, both
// are copies of buf). It is deadlock-free with blocking messages: in each
// direction even ranks send first and odd ranks receive first, so no
// cycle of ranks all waiting to send can form.
func (c *Comm) RingExchange(buf, fromLeft, fromRight []float32) error {
	if len(fromLeft) != len(buf) || len(fromRight) != len(buf) {
		return fmt.Errorf("rank %d: ring exchange: receive buffers of %d and %d values for %d sent", c.Rank(), len(fromLeft), len(fromRight), len(buf))
	}
	n := c.Size()
	if n == 1 {
		copy(fromLeft, buf)
		copy(fromRight, buf)
		return nil
	}
	left, right := c.Neighbours()
	shift := func(to, from, tag int, into []float32) error {
		if c.Rank()%2 == 0 {
			if err := c.Send(to, tag, buf); err != nil {
				return err
			}
			return c.Recv(from, tag, into)
		}
		if err := c.Recv(from, tag, into); err != nil {
			return err
		}
		return c.Send(to, tag, buf)
	}
	// Rightwards: everyone sends to the right and hears from the left.
	if err := shift(right, left, tagRingRight, fromLeft); err != nil {
		return err
	}
	if n == 2 {
		copy(fromRight, fromLeft)
		return nil
	}
	return shift(left, right, tagRingLeft, fromRight)
}
