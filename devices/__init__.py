"""What a device is and says: kinds, venue catalogue, pin maps, the wire contract, drivers."""
