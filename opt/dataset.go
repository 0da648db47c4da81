package opt

import (
	"fmt"
	"math/rand/v2"
)

// Dataset holds samples and their labels in host memory. Sample i is data[i*nIn : (i+1)*nIn] and
// its label labels[i*nLabels : (i+1)*nLabels], in one of two element types each:
//
//   - data: float32 features, or int32 token ids for a model whose Model.Input is core.TypeI32
//     (a language model's window of tokens);
//   - labels: float32 values, as many as the model's outputs per sample (NOut·Rows: one-hot
//     classes, regression targets), or int32 class ids, one per output row (Rows of them: a
//     language model's next tokens), which become one-hot rows on their way to the device.
//
// Shuffle and the batch order use a permutation, so the data itself is never moved.
type Dataset struct {
	f32, f32Labels []float32
	i32, i32Labels []int32
	nIn, nLabels   int
	order          []int
}

// NewDataset checks and wraps data (samples of nIn values) and labels (nLabels per sample); the
// slices are used, not copied. A dataset without labels (nil labels, nLabels 0: for Predict, or a
// LossMean/LossSum model) is written NewDataset[float32, float32](data, nIn, nil, 0). Sizes that are
// not positive, and data and labels of different sample counts, are errors.
func NewDataset[D, L float32 | int32](data []D, nIn int, labels []L, nLabels int) (*Dataset, error) {
	switch {
	case nIn <= 0 || nLabels < 0:
		return nil, fmt.Errorf("tandem: opt: dataset: %d values and %d labels per sample, want > 0 and ≥ 0", nIn, nLabels)
	case len(data) == 0 || len(data)%nIn != 0:
		return nil, fmt.Errorf("tandem: opt: dataset: %d data values are not a whole number of samples of %d values", len(data), nIn)
	case nLabels == 0 && len(labels) != 0:
		return nil, fmt.Errorf("tandem: opt: dataset: %d label values but 0 labels per sample", len(labels))
	case nLabels > 0 && len(labels)%nLabels != 0:
		return nil, fmt.Errorf("tandem: opt: dataset: %d label values are not a whole number of labels of %d", len(labels), nLabels)
	case nLabels > 0 && len(data)/nIn != len(labels)/nLabels:
		return nil, fmt.Errorf("tandem: opt: dataset: %d samples but %d labels", len(data)/nIn, len(labels)/nLabels)
	}
	d := &Dataset{nIn: nIn, nLabels: nLabels}
	switch v := any(data).(type) {
	case []float32:
		d.f32 = v
	case []int32:
		d.i32 = v
	}
	switch v := any(labels).(type) {
	case []float32:
		d.f32Labels = v
	case []int32:
		d.i32Labels = v
	}
	d.order = make([]int, len(data)/nIn)
	for i := range d.order {
		d.order[i] = i
	}
	return d, nil
}

// Len is the number of samples.
func (d *Dataset) Len() int { return len(d.order) }

// Shuffle permutes the sample order with a seeded generator (the same seed, the same order).
func (d *Dataset) Shuffle(seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed^0x5bd1e995))
	r.Shuffle(len(d.order), func(i, j int) { d.order[i], d.order[j] = d.order[j], d.order[i] })
}

// Split returns the first part of the current order (1−valFraction of it) and the rest as two
// datasets sharing the data; valFraction must be in [0, 1).
func (d *Dataset) Split(valFraction float64) (train, val *Dataset, err error) {
	if !(valFraction >= 0 && valFraction < 1) {
		return nil, nil, fmt.Errorf("tandem: opt: validation fraction %g, want [0, 1)", valFraction)
	}
	nTrain := d.Len() - int(float64(d.Len())*valFraction)
	mk := func(o []int) *Dataset {
		c := *d
		c.order = append([]int(nil), o...)
		return &c
	}
	return mk(d.order[:nTrain]), mk(d.order[nTrain:]), nil
}

// hasLabels reports whether the samples carry labels.
func (d *Dataset) hasLabels() bool { return d.nLabels > 0 }

// typeName says what the data is, for errors.
func (d *Dataset) typeName() string {
	if d.i32 != nil {
		return "int32 token ids"
	}
	return "float32 values"
}
