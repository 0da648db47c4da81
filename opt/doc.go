// Package opt trains models built from tandem's ops, ggml-opt's way: one graph holds the forward
// pass, the loss, the backward pass (core.BuildBackward) and an optimizer step per parameter
// (OPT_STEP_ADAMW or OPT_STEP_SGD), it is planned by a scheduler over the caller's backends, and
// every step only copies the next batch (and the step's hyper-parameters) in.
//
// Parameters live where the caller placed them (a weights buffer on a backend); the optimizer's
// moments (and, with Config.Accumulate, the gradient accumulators) are allocated once, next to
// their parameter, and kept across steps; gradients and activations live in the scheduler's
// compute buffers. One scheduler runs every graph of the model — training, evaluation (the same
// forward tensors without the backward pass) and, with Accumulate, the gradient-only graph — so
// the compute buffers are sized once, by the training graph; a switch between graphs plans once.
//
// Data: a Dataset holds float32 features or int32 token ids, with float32 labels or int32 class
// ids (one-hot on the way in). Training takes whole batches; evaluation (Evaluate, Fit's
// validation) and Predict take any number of samples, the last batch partial (its missing rows are
// masked out of the loss and the accuracy, which is counted on the device).
//
// Resources: a Trainer holds a scheduler and the optimizer state's buffers; Close frees them (the
// backends and the parameters stay the caller's).
package opt
