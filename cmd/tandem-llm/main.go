// Command tandem-llm runs GGUF language models with tandem, split across the CPU, GPUs and remote
// RPC devices as llama.cpp's -ngl does. Flags keep llama.cpp's names.
//
//	tandem-llm run -m model.gguf -p "Once upon a time" -n 64
//	tandem-llm run -m model.gguf -p "..." -ngl 12 --rpc 127.0.0.1:50052
//	tandem-llm tokenize -m model.gguf -p "Hello world"
//	tandem-llm bench -m model.gguf -p 512 -n 128 -ngl 0,99 -t 2 -r 5 [-o md|csv|json|jsonl|sql] [-oe FORMAT]
//	tandem-llm gen -o tiny.gguf -shape tinyllama -type q4_0   # a model with random weights
package main

import (
	"fmt"
	"os"
	"strings"
)

const usage = `usage: tandem-llm <command> [flags]

commands:
  run       generate text from a prompt (streams it, then prints timings)
  tokenize  print the token ids (and pieces) of a text
  bench     llama-bench's pp/tg tests and table (-o csv|json|jsonl|sql for its fields)
  gen       write a GGUF model with seeded random weights (for tests and benchmarks)

'tandem-llm <command> -h' lists a command's flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCmd(os.Args[2:])
	case "tokenize":
		err = tokenizeCmd(os.Args[2:])
	case "gen":
		err = genCmd(os.Args[2:])
	case "bench":
		err = benchCmd(os.Args[2:])
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "tandem-llm: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "tandem") {
			msg = "tandem-llm: " + msg
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
}
