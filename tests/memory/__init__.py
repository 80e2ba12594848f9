"""The pure core (memory/): the layer, the contract's property tests, policies, need models, the saved-conversation format."""
