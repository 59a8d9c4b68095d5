package cmdutil

import (
	"bytes"
	"io"
)

// geminiBothKeys starts the line the Gemini SDK prints when GOOGLE_API_KEY and GEMINI_API_KEY
// are both set. The SDK reads the environment itself and names the key massgen does not use:
// massgen hands it the key (api_key, else GEMINI_API_KEY, else GOOGLE_API_KEY), and `configs
// validate` says which one it uses.
var geminiBothKeys = []byte("Both GOOGLE_API_KEY and GEMINI_API_KEY are set")

// SDKLog is where the standard library's log package writes (main sets it): the providers'
// SDKs print through it. Every line goes to W except the Gemini SDK's line about both keys.
// The log package writes one line per Write.
type SDKLog struct{ W io.Writer }

func (s SDKLog) Write(p []byte) (int, error) {
	if bytes.Contains(p, geminiBothKeys) {
		return len(p), nil
	}
	return s.W.Write(p)
}
