mod activation;
mod cli;
mod robustness;
