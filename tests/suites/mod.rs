mod activation;
mod attach;
mod cli;
mod harness;
mod holder;
mod robustness;
mod scopes;
mod service;
