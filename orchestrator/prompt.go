package orchestrator

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/massgen-go/massgen/backends"
	"github.com/massgen-go/massgen/filesystem"
	"github.com/massgen-go/massgen/internal/vocab"
)

// deliveryWarning is the spec's answer to the File Delivery Challenge.
const deliveryWarning = "Files inside `.massgen/` do NOT count as delivered: your workspace is only a staging area."

// coordinationSystem is the system prompt of a coordination execution. It never names real ids,
// and holds nothing particular to one execution (see coordinationPrompt).
func (r *run) coordinationSystem(a *agent, single bool) string {
	var b strings.Builder
	if s := strings.TrimSpace(a.cfg.SystemMessage); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString(r.planningInstruction(a))
	if single {
		b.WriteString("You are working on the task below. When you are done, call the new_answer tool with your complete answer. ")
		b.WriteString("Afterwards you will present the final answer and deliver any files.\n")
		return b.String()
	}
	b.WriteString("You are one of several agents working on the same task at the same time. ")
	b.WriteString("The other agents' current answers are shown under anonymous ids (agent1, agent2, ...). ")
	b.WriteString("Finish every turn of yours by calling exactly one workflow tool:\n")
	b.WriteString("- new_answer(content): your complete answer, when it is better than every existing answer;\n")
	b.WriteString("- vote(agent_id, reason): the best existing answer (yours included), when you cannot improve on it.\n")
	b.WriteString("Other tool calls may come in the same reply. If another agent posts a new answer while you work, you are restarted at your next step and shown every answer; ")
	b.WriteString("what you had done so far is kept in your own folder of the temporary workspace.\n")
	b.WriteString(votingCriteria(r.cfg.Orchestrator.VotingSensitivity))
	b.WriteString(noveltyCriteria(r.cfg.Orchestrator.AnswerNoveltyRequirement))
	return b.String()
}

// coordinationPrompt is the user message and the length of its shared prefix. Requests are laid
// out stable part first, for the providers' prompt caches: the system prompt (the same for
// agents with the same system_message and tools), then this message's shared part (the task and
// every current answer, in config order: the same in every agent's request of a quiet period),
// then what is the agent's own (its anonymous id, its paths, whether it may still answer).
func (r *run) coordinationPrompt(a *agent, answers []shownAnswer, answersLeft bool) (string, int) {
	var b strings.Builder
	r.writeFeedback(&b)
	r.writeTask(&b)
	if len(r.agents) > 1 {
		writeAnswers(&b, answers, "<CURRENT ANSWERS from the agents>", "<END OF CURRENT ANSWERS>")
	}
	shared := b.Len()
	if len(r.agents) > 1 {
		fmt.Fprintf(&b, "Your own anonymous id is %s.\n\n", a.anon)
	}
	r.writePaths(&b, a, false, a.toolset)
	if !answersLeft {
		b.WriteString("You have posted the maximum number of new answers: vote now.\n")
	}
	return b.String(), shared
}

func (r *run) writeTask(b *strings.Builder) {
	fmt.Fprintf(b, "<ORIGINAL MESSAGE>\n%s\n<END OF ORIGINAL MESSAGE>\n\n", r.o.Task)
}

// writeAnswers lists answers under their anonymous ids, between open and end.
func writeAnswers(b *strings.Builder, answers []shownAnswer, open, end string) {
	b.WriteString(open + "\n")
	if len(answers) == 0 {
		b.WriteString("(no answers yet)\n")
	}
	for _, ans := range answers {
		fmt.Fprintf(b, "<%s>\n%s\n<end of %s>\n", ans.anon, ans.text, ans.anon)
	}
	b.WriteString(end + "\n\n")
}

// writePaths tells the agent where it may work and how delivery works; ts (its tools in this
// role) lists the paths it may read in the words of list_allowed_directories.
func (r *run) writePaths(b *strings.Builder, a *agent, final bool, ts *filesystem.Toolset) {
	if a.workspace == "" {
		b.WriteString("You have no workspace and no file tools in this run.\n")
		if ts != nil && len(ts.Tools()) > 0 { // its MCP tools are held to the same limits
			writeLimits(b, ts)
		}
		return
	}
	fmt.Fprintf(b, "Your workspace (read and write; do your work here): %s\n", a.workspace)
	fmt.Fprintf(b, "Temporary workspace (read-only): %s, with every agent's latest work in one folder per anonymous id. "+
		"Yours is %s: your work from before a restart, or the files of your last answer (copy from it to continue).\n",
		a.tempDir, filepath.Join(a.tempDir, a.anon))
	cps := r.cfg.Orchestrator.ContextPaths
	if len(cps) > 0 {
		b.WriteString("Context paths (the user's files):\n")
		for _, cp := range cps {
			access := "read-only"
			switch {
			case final && cp.Permission == vocab.AccessWrite:
				access = "read and write: deliver files here"
			case cp.Permission == vocab.AccessWrite:
				access = "read-only now; the agent presenting the final answer may write here"
			}
			fmt.Fprintf(b, "- %s (%s)\n", cp.Path, access)
		}
	}
	for _, ro := range r.o.ReadOnly { // multi-turn sessions: the previous turn's final workspace
		fmt.Fprintf(b, "Previous turn's final workspace (read-only): %s\n", ro)
	}
	if w := r.o.PriorWork; w != "" {
		fmt.Fprintf(b, "Every agent's work from the previous turn, which ended early (read-only, one folder per anonymous id): %s\n", w)
	}
	if ts != nil {
		b.WriteString("Paths you may read (list_allowed_directories shows the same):\n")
		b.WriteString(ts.DescribeRoots())
		writeLimits(b, ts)
	}
	b.WriteString(deliveryWarning)
	if final {
		b.WriteString(" To deliver a file, write or copy it to its full absolute path inside a writable context path.")
	}
	b.WriteString("\n")
}

// writeLimits states the agent's directory limits, which every tool call is held to, once (the
// tools are offered without them: see toolSpecs).
func writeLimits(b *strings.Builder, ts *filesystem.Toolset) {
	if limits := ts.DescribeLimits(); limits != "" {
		b.WriteString(strings.TrimRight(limits, "\n") + "\n")
	}
}

// history turns earlier turns into messages before the current prompt (shared: the length of
// its prefix every agent's request sends too). An earlier turn that ended early brings the
// agents' answers so far, under their anonymous ids.
func (r *run) history(prompt string, shared int) []backends.Message {
	msgs := make([]backends.Message, 0, 2*len(r.o.History)+1)
	for _, ex := range r.o.History {
		msgs = append(msgs, backends.Message{Role: "user", Content: ex.User}, backends.Message{Role: "assistant", Content: priorAnswer(ex)})
	}
	return append(msgs, backends.Message{Role: "user", Content: prompt, SharedPrefix: shared})
}

// priorAnswer is what an earlier turn answered, as the next turns are shown it.
func priorAnswer(ex Exchange) string {
	if ex.Interrupted == "" {
		return ex.Assistant
	}
	var b strings.Builder
	if ex.Assistant != "" {
		b.WriteString(ex.Assistant)
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "(This turn ended early: %s.", ex.Interrupted)
	if len(ex.Answers) == 0 {
		b.WriteString(" No agent had answered yet.)\n")
		return b.String()
	}
	b.WriteString(" The agents' answers so far follow.)\n")
	answers := make([]shownAnswer, len(ex.Answers))
	for i, a := range ex.Answers {
		answers[i] = shownAnswer{anon: a.Anon, text: a.Text}
	}
	writeAnswers(&b, answers, "<ANSWERS SO FAR>", "<END OF ANSWERS SO FAR>")
	return b.String()
}

// vars are the run-time values the scripted backend substitutes into its steps.
func (r *run) vars(a *agent, answerAnons []string) map[string]string {
	v := map[string]string{
		"WORKSPACE":      a.workspace,
		"TEMP_WORKSPACE": a.tempDir,
		"ANSWERS":        strings.Join(answerAnons, ","),
		"AGENT_ANON":     a.anon,
	}
	for i, cp := range r.cfg.Orchestrator.ContextPaths {
		v["CONTEXT_"+strconv.Itoa(i)] = cp.Path
	}
	for i, ro := range r.o.ReadOnly {
		v["READ_ONLY_"+strconv.Itoa(i)] = ro
	}
	if r.o.PriorWork != "" {
		v["PRIOR_WORK"] = r.o.PriorWork
	}
	return v
}

// finalSystem is the system prompt of the final presentation.
func (r *run) finalSystem(a *agent) string {
	var b strings.Builder
	if s := strings.TrimSpace(a.cfg.SystemMessage); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString("You are presenting the final answer to the user. Use your tools to deliver any files, ")
	b.WriteString("then reply with the final answer as plain text (a reply without tool calls ends the presentation). ")
	b.WriteString("There is no voting in this phase.\n")
	return b.String()
}

// finalPrompt shows the task, every answer and the votes of the last coordination, all under
// anonymous ids.
func (r *run) finalPrompt(a *agent, ts *filesystem.Toolset) string {
	var b strings.Builder
	s := &r.coord
	r.writeFeedback(&b)
	r.writeTask(&b)
	switch {
	case r.skipped:
		b.WriteString("There was no coordination (skip_coordination_rounds): work on the task and present the final answer yourself.\n\n")
	case len(r.agents) > 1:
		writeAnswers(&b, s.shownAnswers(), "<ALL ANSWERS>", "<END OF ALL ANSWERS>")
		b.WriteString("<VOTES>\n")
		for _, v := range s.agents {
			if v.vote != nil {
				fmt.Fprintf(&b, "%s voted for %s: %s\n", v.anon, s.agents[v.vote.target].anon, v.vote.reason)
			}
		}
		b.WriteString("<END OF VOTES>\n\n")
		fmt.Fprintf(&b, "You are %s and your answer was selected. Present the final answer, improving on it with the others' work where useful.\n\n", a.anon)
	default:
		if ans := s.agents[a.index].answer; ans != nil {
			fmt.Fprintf(&b, "<YOUR ANSWER>\n%s\n<END OF YOUR ANSWER>\n\nPresent the final answer.\n\n", ans.text)
		}
	}
	r.writePaths(&b, a, true, ts)
	return b.String()
}

// votingCriteria is MassGen's evaluation section for voting_sensitivity: how good the best
// answer must be before the agent votes for it instead of answering.
func votingCriteria(level vocab.VotingSensitivity) string {
	switch level {
	case vocab.ChecklistGated:
		return checklistCriteriaPrompt()
	case vocab.VotingStrict:
		return `Does the best CURRENT ANSWER address the ORIGINAL MESSAGE exceptionally well? Consider:
- Is it comprehensive, addressing ALL aspects and edge cases?
- Is it technically accurate and well-reasoned?
- Does it provide clear explanations and proper justification?
- Is it complete with no significant gaps or weaknesses?
- Could it serve as a reference-quality solution?
Only use the vote tool if the best answer meets high standards of excellence. Otherwise, digest the existing answers, combine their strengths, address their weaknesses, and post a better answer with new_answer.
`
	case vocab.VotingBalanced:
		return `Does the best CURRENT ANSWER address the ORIGINAL MESSAGE well? Consider:
- Is it comprehensive, accurate, and complete?
- Could it be meaningfully improved, refined, or expanded?
- Are there weaknesses, gaps, or better approaches?
Only use the vote tool if the best answer is strong and complete. Otherwise, digest the existing answers, combine their strengths, address their weaknesses, and post a better answer with new_answer.
`
	}
	return `Does the best CURRENT ANSWER address the ORIGINAL MESSAGE well? If YES, use the vote tool and do not post a new answer. Otherwise, digest the existing answers, combine their strengths, address their weaknesses, and post a better answer with new_answer.
`
}

// noveltyCriteria is MassGen's instruction for answer_novelty_requirement ("" for lenient); the
// matching check is in answerProblem.
func noveltyCriteria(level vocab.Strictness) string {
	switch level {
	case vocab.Strict:
		return `CRITICAL: New answers must be SUBSTANTIALLY different from existing answers.
- Use a fundamentally different approach or methodology
- Employ different tools or techniques
- Provide significantly more depth or novel perspectives
- If you cannot provide a truly novel solution, vote instead
`
	case vocab.Balanced:
		return `IMPORTANT: If you provide a new answer, it must be meaningfully different from existing answers.
- Don't just rephrase or reword existing solutions
- Introduce new insights, approaches, or tools
- Make substantive improvements, not cosmetic changes
`
	}
	return ""
}

// defaultPlanningInstruction is MassGen's planning_mode_instruction.
const defaultPlanningInstruction = "During coordination, describe what you would do without actually executing actions. Only provide concrete implementation details without calling external APIs or tools."

// planningInstruction is the planning-mode part of a coordination system prompt ("" without
// planning mode): the configured (or MassGen's) instruction, and which of the agent's tools
// are not run until the final presentation.
func (r *run) planningInstruction(a *agent) string {
	c := r.cfg.Orchestrator.Coordination
	if !c.EnablePlanningMode {
		return ""
	}
	text := strings.TrimSpace(c.PlanningModeInstruction)
	if text == "" {
		text = defaultPlanningInstruction
	}
	var planned []string
	for _, t := range a.tools {
		if a.toolset != nil && a.toolset.Planned(t.Name) {
			planned = append(planned, t.Name)
		}
	}
	if len(planned) > 0 {
		text += "\nThese tools are not run during coordination (a call gets a note instead); the agent presenting the final answer runs them: " + strings.Join(planned, ", ") + "."
	}
	return text + "\n\n"
}
