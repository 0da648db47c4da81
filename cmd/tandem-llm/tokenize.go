package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm"
	"github.com/tandem-ml/tandem/llm/testmodel"
)

func tokenizeCmd(args []string) error {
	fs := flag.NewFlagSet("tokenize", flag.ContinueOnError)
	model := fs.String("m", "", "model or vocab-only file (GGUF)")
	prompt := fs.String("p", "", "text to tokenize")
	promptFile := fs.String("f", "", "read the text from this file")
	idsOnly := fs.Bool("ids", false, "print only the ids, as a list")
	noBOS := fs.Bool("no-bos", false, "do not add BOS/EOS")
	noSpecial := fs.Bool("no-parse-special", false, "treat special-token text as plain text")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *model == "" {
		return errors.New("tokenize: -m model.gguf is required")
	}
	if *promptFile != "" {
		b, err := os.ReadFile(*promptFile)
		if err != nil {
			return err
		}
		*prompt = string(b)
	}
	v, err := llm.OpenVocab(*model)
	if err != nil {
		return err
	}
	ids, err := v.Encode(*prompt, !*noBOS, !*noSpecial)
	if err != nil {
		return err
	}
	if *idsOnly {
		s := make([]string, len(ids))
		for i, id := range ids {
			s[i] = strconv.Itoa(int(id))
		}
		fmt.Printf("[%s]\n", strings.Join(s, ", "))
		return nil
	}
	for _, id := range ids {
		p, err := v.Piece(id, true)
		if err != nil {
			return err
		}
		fmt.Printf("%6d -> '%s'\n", id, p)
	}
	return nil
}

func genCmd(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	out := fs.String("o", "", "output file")
	shape := fs.String("shape", "tinyllama", "tinyllama (TinyLlama-1.1B's shapes), moe (n_embd 1024, 12 layers, 8 experts, 2 used, ff 2816), or tiny-ARCH (llama, qwen2, qwen3, qwen3moe)")
	typ := fs.String("type", "q4_0", "weight type: f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_K, q5_K, q6_K, ...")
	seed := fs.Uint64("seed", 42, "seed of the weights")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("gen: -o FILE is required")
	}
	t, ok := core.TypeByName(*typ)
	if !ok {
		return fmt.Errorf("gen: unknown -type %q", *typ)
	}
	var spec testmodel.Spec
	switch {
	case *shape == "tinyllama":
		spec = testmodel.TinyLlama(t)
	case *shape == "moe":
		spec = testmodel.MoE(t)
	case strings.HasPrefix(*shape, "tiny-"):
		spec = testmodel.Tiny(strings.TrimPrefix(*shape, "tiny-"))
		spec.WeightType = t
	default:
		return fmt.Errorf("gen: unknown -shape %q", *shape)
	}
	spec.Seed = *seed
	return testmodel.Write(*out, spec)
}
