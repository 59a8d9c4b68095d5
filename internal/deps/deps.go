// Package deps pins the project's planned dependencies while packages are being written.
// It is removed once every dependency is imported by real code.
package deps

import (
	_ "github.com/anthropics/anthropic-sdk-go"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/charmbracelet/huh"
	_ "github.com/joho/godotenv"
	_ "github.com/landlock-lsm/go-landlock/landlock"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/otiai10/copy"
	_ "github.com/spf13/cobra"
	_ "github.com/spf13/viper"
	_ "go.uber.org/zap"
	_ "golang.org/x/term"
	_ "google.golang.org/genai"
	_ "gopkg.in/yaml.v3"
	_ "mvdan.cc/sh/v3/syntax"
)
