package orchestrator

import (
	_ "embed"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

// ToolSubmit is the post-evaluation tool that lets the final answer stand.
const ToolSubmit = "submit"

//go:embed submit.md
var submitDescription string

type submitParams struct {
	Confirmed bool `json:"confirmed" required:"true" enum:"true" description:"Set to true to confirm the answer is satisfactory."`
}

// submit is declared as MassGen declares it (its schema allows other properties); a call is
// taken as it is, whatever its arguments.
var submitTool = tooldecl.New(tooldecl.Def[submitParams]{
	Name:        ToolSubmit,
	Description: submitDescription,
	Open:        true,
	Lenient:     true,
})

func submitSpec() backends.ToolSpec { return toolSpec(submitTool) }
