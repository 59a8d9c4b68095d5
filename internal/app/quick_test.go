package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestQuickConfigGuessesTheBackend(t *testing.T) {
	for model, backend := range map[string]string{"gpt-5": "openai", "o3-mini": "openai", "claude-sonnet-4-5": "claude", "gemini-2.5-pro": "gemini", "grok-4": "grok", "glm-4.5": "zai"} {
		name, data, err := quickConfig(QuickOptions{Model: model}, "")
		if err != nil || !strings.Contains(string(data), "type: "+backend) || name != "quick mode (--backend "+backend+" --model "+model+")" {
			t.Errorf("%s: %s %s %v, want backend %s", model, name, data, err, backend)
		}
	}
}

// writeResponses streams a Responses API reply: a new_answer call in coordination, the final
// text otherwise.
func writeResponses(w http.ResponseWriter, coordination bool) {
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		data, _ := json.Marshal(fields)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
		w.(http.Flusher).Flush()
	}
	base := map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5", "status": "in_progress", "output": []any{}}
	send("response.created", map[string]any{"response": base})
	var item map[string]any
	if coordination {
		args := `{"content":"4"}`
		item = map[string]any{"id": "fc_1", "type": "function_call", "status": "completed", "arguments": args, "call_id": "call_1", "name": "new_answer"}
		send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_1", "name": "new_answer"}})
		send("response.function_call_arguments.delta", map[string]any{"item_id": "fc_1", "output_index": 0, "delta": args})
		send("response.function_call_arguments.done", map[string]any{"item_id": "fc_1", "output_index": 0, "arguments": args})
	} else {
		text := "The answer is 4."
		part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
		item = map[string]any{"id": "msg_1", "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		send("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{"id": "msg_1", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
		send("response.content_part.added", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		send("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": text, "logprobs": []any{}})
		send("response.output_text.done", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "text": text, "logprobs": []any{}})
		send("response.content_part.done", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "part": part})
	}
	send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
	done := map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5", "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}
	send("response.completed", map[string]any{"response": done})
}
