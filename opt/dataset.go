package opt

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Dataset holds samples and their labels in host memory: sample i is Data[i*NFeatures :
// (i+1)*NFeatures], its label Labels[i*NLabels : (i+1)*NLabels]. Shuffle and the batch order use
// a permutation, so the data itself is never moved.
type Dataset struct {
	data, labels      []float32
	nFeatures, nLabel int
	order             []int
}

// NewDataset checks and wraps data (n samples of nFeatures values) and labels (n of nLabels).
// Sizes that are not positive, or data and labels of different sample counts, are errors.
func NewDataset(data []float32, nFeatures int, labels []float32, nLabels int) (*Dataset, error) {
	switch {
	case nFeatures <= 0 || nLabels <= 0:
		return nil, fmt.Errorf("tandem: opt: dataset: %d features and %d labels per sample, want both > 0", nFeatures, nLabels)
	case len(data) == 0 || len(data)%nFeatures != 0:
		return nil, fmt.Errorf("tandem: opt: dataset: %d data values are not a whole number of samples of %d features", len(data), nFeatures)
	case len(labels)%nLabels != 0:
		return nil, fmt.Errorf("tandem: opt: dataset: %d label values are not a whole number of labels of %d", len(labels), nLabels)
	case len(data)/nFeatures != len(labels)/nLabels:
		return nil, fmt.Errorf("tandem: opt: dataset: %d samples but %d labels", len(data)/nFeatures, len(labels)/nLabels)
	}
	d := &Dataset{data: data, labels: labels, nFeatures: nFeatures, nLabel: nLabels}
	d.order = make([]int, len(data)/nFeatures)
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
		return &Dataset{data: d.data, labels: d.labels, nFeatures: d.nFeatures, nLabel: d.nLabel, order: append([]int(nil), o...)}
	}
	return mk(d.order[:nTrain]), mk(d.order[nTrain:]), nil
}

// Batches is how many whole batches of size batchSize the dataset holds (the rest is left out
// of an epoch, as ggml-opt does).
func (d *Dataset) Batches(batchSize int) int {
	if batchSize <= 0 {
		return 0
	}
	return d.Len() / batchSize
}

// errBatch is returned for a batch size the dataset cannot fill.
var errBatch = errors.New("batch size larger than the dataset")

// Batch copies batch i (samples i*batchSize … in the current order) into data and labels, which
// must hold batchSize samples each.
func (d *Dataset) Batch(i, batchSize int, data, labels []float32) error {
	switch {
	case batchSize <= 0:
		return fmt.Errorf("tandem: opt: batch size %d", batchSize)
	case batchSize > d.Len():
		return fmt.Errorf("tandem: opt: %w (%d > %d samples)", errBatch, batchSize, d.Len())
	case i < 0 || i >= d.Batches(batchSize):
		return fmt.Errorf("tandem: opt: batch %d of %d", i, d.Batches(batchSize))
	case len(data) != batchSize*d.nFeatures || len(labels) != batchSize*d.nLabel:
		return fmt.Errorf("tandem: opt: batch buffers of %d and %d values, want %d and %d", len(data), len(labels),
			batchSize*d.nFeatures, batchSize*d.nLabel)
	}
	for k := 0; k < batchSize; k++ {
		s := d.order[i*batchSize+k]
		copy(data[k*d.nFeatures:(k+1)*d.nFeatures], d.data[s*d.nFeatures:(s+1)*d.nFeatures])
		copy(labels[k*d.nLabel:(k+1)*d.nLabel], d.labels[s*d.nLabel:(s+1)*d.nLabel])
	}
	return nil
}
