"""The product's services: ChatService, configuration, identity, replay, what-if, saved conversations, need priors."""
