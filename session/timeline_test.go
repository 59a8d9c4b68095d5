package session

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The timeline of a turn is stored in metadata.json and read back as it was.
func TestTimelineKept(t *testing.T) {
	base := t.TempDir()
	st, err := Open(filepath.Join(base, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	ses, err := st.New(t0)
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	writeFile(t, filepath.Join(ws, "a.txt"), "a")
	timeline := []Moment{
		{Time: t0, Kind: "run_start"},
		{Time: t0.Add(time.Second), Kind: "answer", Agent: "alice"},
		{Time: t0.Add(2 * time.Second), Kind: "restart", Agent: "bob", Text: "new answer from agent1"},
		{Time: t0.Add(3 * time.Second), Kind: "vote", Agent: "bob", Target: "alice"},
	}
	if _, err := ses.SaveTurn(Turn{Task: "t", Answer: "a", Workspace: ws, Timeline: timeline}); err != nil {
		t.Fatal(err)
	}
	if raw := readFile(t, filepath.Join(ses.Dir, "turn_1", metadataFile)); !strings.Contains(raw, `"timeline": [`) {
		t.Errorf("metadata.json has no timeline:\n%s", raw)
	}
	again, err := st.Get(ses.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := again.Turns()[0].Timeline
	for i := range got { // JSON keeps the instant, not the *time.Location pointer
		got[i].Time = got[i].Time.UTC()
	}
	if !reflect.DeepEqual(got, timeline) {
		t.Errorf("timeline read back:\n%+v\nwant:\n%+v", got, timeline)
	}
}
