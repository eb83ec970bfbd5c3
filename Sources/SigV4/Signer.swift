// Placeholder: the signer is written in this module.
