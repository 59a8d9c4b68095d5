package orchestrator

import (
	_ "embed"
	"encoding/json"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/internal/tooldecl"
)

// ToolSubmitChecklist is MassGen's checklist tool.
const ToolSubmitChecklist = "submit_checklist"

//go:embed submit_checklist.md
var checklistDescription string

type checklistParams struct {
	Scores     json.RawMessage `json:"scores" required:"true" type:"object" description:"Scores per criterion (E1, E2, ...), per agent when several have answers."`
	ReportPath string          `json:"report_path" description:"Optional: a report in your workspace explaining the scores."`
}

var checklistTool = tooldecl.New(tooldecl.Def[checklistParams]{
	Name:        ToolSubmitChecklist,
	Description: checklistDescription,
	Open:        true,
	Lenient:     true,
})

// checklistSpec is the tool as offered.
func checklistSpec() backends.ToolSpec { return toolSpec(checklistTool) }
