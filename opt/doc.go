// Package opt trains models built from tandem's ops, ggml-opt's way: one graph holds the forward
// pass, the loss, the backward pass (core.BuildBackward) and an optimizer step per parameter
// (OPT_STEP_ADAMW or OPT_STEP_SGD), it is planned once by a scheduler over the caller's backends,
// and every step only copies the next batch (and the step's hyper-parameters) in.
//
// Parameters live where the caller placed them (a weights buffer on a backend); the optimizer's
// moments are allocated once, next to their parameter, and kept across steps; gradients live in
// the scheduler's compute buffers, planned once. Evaluation runs a second graph of the same model
// (built again by Model.Build over the same parameters) on its own scheduler, so switching between
// training and validation re-plans nothing.
//
// Resources: a Trainer holds two schedulers and the moments' buffers; Close frees them (the
// backends and the parameters stay the caller's).
package opt
