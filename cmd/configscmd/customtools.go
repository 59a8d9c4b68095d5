package configscmd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/massgen-go/massgen/configs"
	"github.com/massgen-go/massgen/internal/agentenv"
)

// CheckCustomTools reads the agents' custom tools as the start of a run does (python3 in the
// command sandbox, with each agent's permissions): a function that does not exist, a module its
// file imports that is not installed. Agents whose custom_tools already have a problem in
// found (no python3, a missing file) are not read again.
func CheckCustomTools(ctx context.Context, cfg *configs.Config, found []configs.Problem) []configs.Problem {
	var ids []string
	for i, a := range cfg.Agents {
		prefix := fmt.Sprintf("agents[%d].backend.custom_tools", i)
		if len(a.Backend.CustomTools) == 0 || slices.ContainsFunc(found, func(p configs.Problem) bool { return strings.HasPrefix(p.Key, prefix) }) {
			continue
		}
		ids = append(ids, a.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	env, err := agentenv.New(agentenv.Options{Config: cfg, DecideOnly: true})
	if err != nil {
		file, _ := cfg.Position("agents")
		return []configs.Problem{{File: file, Message: err.Error()}}
	}
	defer env.Close()
	return env.CheckCustomTools(ctx, ids)
}
