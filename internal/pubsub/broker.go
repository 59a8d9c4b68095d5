// Package pubsub is a typed publish/subscribe broker for one process (after crush's
// internal/pubsub): a producer publishes values, every subscriber receives them on its own
// channel, in the order they were published. Nothing is dropped: a subscriber that falls behind
// holds the producer up (as a synchronous callback would), so a display or a recorder never
// misses a value.
package pubsub

import (
	"context"
	"sync"
)

// bufferSize is each subscription's channel buffer: a subscriber that is briefly busy (a
// redraw, a write) does not hold the producer up.
const bufferSize = 64

// Broker delivers every value published to every subscriber. Its zero value is not usable: use
// New. It is safe for concurrent use.
type Broker[T any] struct {
	mu     sync.Mutex // held while a value is handed out: publishes do not interleave
	subs   []*subscription[T]
	closed bool
}

type subscription[T any] struct {
	ch   chan T
	done <-chan struct{} // the subscriber's context
}

// New returns an open broker with no subscribers.
func New[T any]() *Broker[T] {
	return &Broker[T]{}
}

// Subscribe returns a channel of every value published from now on, in publish order. The
// channel is closed by Close, or once ctx ends (nothing more is delivered to it then). After
// Close it returns a closed channel.
func (b *Broker[T]) Subscribe(ctx context.Context) <-chan T {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &subscription[T]{ch: make(chan T, bufferSize), done: ctx.Done()}
	if b.closed {
		close(s.ch)
		return s.ch
	}
	b.subs = append(b.subs, s)
	if s.done != nil {
		go func() {
			<-s.done
			b.unsubscribe(s)
		}()
	}
	return s.ch
}

func (b *Broker[T]) unsubscribe(s *subscription[T]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, x := range b.subs {
		if x == s {
			b.subs = append(b.subs[:i], b.subs[i+1:]...)
			close(s.ch)
			return
		}
	}
}

// Publish hands v to every subscriber, waiting while a subscriber's buffer is full; it skips
// only a subscriber whose context ended. Concurrent publishes are delivered one after the
// other, each to every subscriber. After Close it does nothing.
func (b *Broker[T]) Publish(v T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for _, s := range b.subs {
		select {
		case s.ch <- v:
		case <-s.done:
		}
	}
}

// Close ends every subscription: each channel is closed once its subscriber has received
// every value published before. Later publishes do nothing.
func (b *Broker[T]) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	for _, s := range b.subs {
		close(s.ch)
	}
	b.subs = nil
}
