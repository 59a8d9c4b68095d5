package orchestrator

import (
	"context"
	"sync"
	"testing"
	"time"
)

// ownerEvents collects what an owner emits.
type ownerEvents struct {
	mu  sync.Mutex
	all []Event
}

func (e *ownerEvents) emit(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
}

func (e *ownerEvents) count(kind EventKind, agent string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ev := range e.all {
		if ev.Kind == kind && ev.Agent == agent {
			n++
		}
	}
	return n
}

// The owner carries out the policy's effects: a new answer tells the working agent that its
// restart is pending, and cancels its execution when the grace runs out; the end of
// coordination is seen (finished) before the executions it cancels end.
func TestOwnerSignalsRestartsAndCancels(t *testing.T) {
	var evs ownerEvents
	s := newState([]string{"alice", "bob"}, []string{"agent1", "agent2"}, rules{grace: time.Millisecond}, replyClock{})
	o := newOwner(t.Context(), s, evs.emit, func() string { return "" }, nil)
	go o.loop()
	aliceTurn, ok := o.awaitTurn(t.Context(), alice)
	bobTurn, ok2 := o.awaitTurn(t.Context(), bob)
	if !ok || !ok2 {
		t.Fatal("an agent got no turn at the start")
	}
	if err := o.ask(answerPosted{agent: alice, text: "hello", at: time.Now()}); err != nil {
		t.Fatalf("answer refused: %v", err)
	}
	<-bobTurn.restart    // pending: it restarts at its next step...
	<-bobTurn.ctx.Done() // ...or is cancelled once the grace ran out
	if aliceTurn.ctx.Err() != nil {
		t.Error("the answering agent's execution was cancelled")
	}
	o.send(executionEnded{agent: bob, kind: outRestart})
	bobTurn, ok = o.awaitTurn(t.Context(), bob)
	if !ok || len(bobTurn.view.answers) != 1 || bobTurn.view.answers[0] != (shownAnswer{anon: "agent1", text: "hello"}) {
		t.Fatalf("bob's next turn %v shows %+v", ok, bobTurn.view)
	}
	if err := o.ask(votePosted{agent: bob, target: "agent1", reason: "good"}); err != nil {
		t.Fatalf("vote refused: %v", err)
	}
	o.send(executionEnded{agent: alice, kind: outDone})
	o.send(executionEnded{agent: bob, kind: outDone})
	aliceTurn, ok = o.awaitTurn(t.Context(), alice)
	if !ok {
		t.Fatal("alice did not vote in the quiet period")
	}
	if err := o.ask(votePosted{agent: alice, target: "agent1", reason: "mine"}); err != nil {
		t.Fatalf("vote refused: %v", err)
	}
	<-aliceTurn.ctx.Done() // the end cancels every execution...
	if !o.finished() {     // ...once it is seen as the end
		t.Error("an execution was cancelled by the end before the end was visible")
	}
	o.send(executionEnded{agent: alice, kind: outCancelled})
	final := o.close()
	if w := final.leader(); w != alice || final.ended != "" {
		t.Errorf("leader %d, ended %q", w, final.ended)
	}
	if n := evs.count(EventStart, "bob"); n != 2 {
		t.Errorf("bob started %d times, want 2", n)
	}
}

// Once the coordination's context has ended (the overall timeout), coordination is stopped
// before any message is handled, whether the owner's loop saw the end or the message first: a
// restart reported then starts nothing.
func TestOwnerStopsBeforeLaterMessages(t *testing.T) {
	var evs ownerEvents
	ctx, cancel := context.WithCancel(t.Context())
	s := newState([]string{"alice", "bob"}, []string{"agent1", "agent2"}, rules{grace: time.Hour}, replyClock{})
	o := newOwner(ctx, s, evs.emit, func() string { return "timed out" }, nil)
	o.ctxDone = ctx.Done()
	o.handle(envelope{m: begin{}}) // the loop's first step, here without the loop
	if _, ok := o.awaitTurn(t.Context(), bob); !ok {
		t.Fatal("bob got no turn at the start")
	}
	cancel()
	o.receive(envelope{m: executionEnded{agent: bob, kind: outRestart}}) // the loop saw the message first
	if n := evs.count(EventStart, "bob"); n != 1 || !o.s.finished || o.s.ended != "timed out" {
		t.Fatalf("bob started %d times; finished %v, ended %q", n, o.s.finished, o.s.ended)
	}
	o.stopOnEnd() // the loop sees the end afterwards: nothing more
	if n := len(evs.all); n != 2 {
		t.Errorf("%d events, want bob's and alice's start", n)
	}
}
