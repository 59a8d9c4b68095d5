package pubsub

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// drain reads ch until it is closed.
func drain[T any](ch <-chan T) []T {
	var out []T
	for v := range ch {
		out = append(out, v)
	}
	return out
}

// Every subscriber gets every value, in publish order, however far behind it is: values are
// never dropped, and Close ends each channel after the values published before it.
func TestEverySubscriberGetsEveryValueInOrder(t *testing.T) {
	for _, tt := range []struct {
		name        string
		subscribers int
		values      int
	}{
		{name: "one subscriber, fewer values than its buffer", subscribers: 1, values: bufferSize / 2},
		{name: "three subscribers, far more values than a buffer", subscribers: 3, values: 50 * bufferSize},
		{name: "no subscriber", subscribers: 0, values: 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := New[int]()
			got := make([][]int, tt.subscribers)
			var wg sync.WaitGroup
			for i := range tt.subscribers {
				ch := b.Subscribe(t.Context())
				wg.Go(func() { got[i] = drain(ch) })
			}
			for v := range tt.values {
				b.Publish(v)
			}
			b.Close()
			wg.Wait()
			want := make([]int, tt.values)
			for i := range want {
				want[i] = i
			}
			for i, g := range got {
				if !slices.Equal(g, want) {
					t.Errorf("subscriber %d got %d values (first %v), want 0..%d in order", i, len(g), g[:min(len(g), 5)], tt.values-1)
				}
			}
		})
	}
}

// Publishers racing each other: every subscriber sees one and the same sequence, holding each
// publisher's values in the order it published them.
func TestConcurrentPublishersOneOrder(t *testing.T) {
	const publishers, each = 8, 2000
	b := New[[2]int]()
	got := make([][][2]int, 3)
	var readers sync.WaitGroup
	for i := range got {
		ch := b.Subscribe(t.Context())
		readers.Go(func() { got[i] = drain(ch) })
	}
	var writers sync.WaitGroup
	for p := range publishers {
		writers.Go(func() {
			for n := range each {
				b.Publish([2]int{p, n})
			}
		})
	}
	writers.Wait()
	b.Close()
	readers.Wait()
	for i, g := range got {
		if len(g) != publishers*each {
			t.Fatalf("subscriber %d got %d values, want %d", i, len(g), publishers*each)
		}
		if !slices.Equal(g, got[0]) {
			t.Errorf("subscriber %d saw another order than subscriber 0", i)
		}
		next := make([]int, publishers)
		for _, v := range g {
			if v[1] != next[v[0]] {
				t.Fatalf("subscriber %d: publisher %d's value %d came before %d", i, v[0], v[1], next[v[0]])
			}
			next[v[0]]++
		}
	}
}

// A subscriber whose context ended gets nothing more and its channel is closed; publishing goes
// on for the others without waiting for it.
func TestEndedSubscriberIsSkipped(t *testing.T) {
	b := New[int]()
	ctx, cancel := context.WithCancel(t.Context())
	gone := b.Subscribe(ctx) // never read: only its context ending lets publishes past it
	kept := b.Subscribe(t.Context())
	var got []int
	var wg sync.WaitGroup
	wg.Go(func() { got = drain(kept) })
	cancel()
	for v := range 10 * bufferSize {
		b.Publish(v)
	}
	b.Close()
	wg.Wait()
	if len(got) != 10*bufferSize {
		t.Errorf("the other subscriber got %d values, want %d", len(got), 10*bufferSize)
	}
	if n := len(drain(gone)); n > bufferSize {
		t.Errorf("the ended subscriber's channel holds %d values, more than its buffer", n)
	}
}

// After Close: Subscribe returns a closed channel, Publish does nothing, Close again is harmless.
func TestAfterClose(t *testing.T) {
	b := New[string]()
	b.Close()
	b.Publish("late")
	b.Close()
	if got := drain(b.Subscribe(t.Context())); len(got) != 0 {
		t.Errorf("a subscription after Close got %v", got)
	}
}
