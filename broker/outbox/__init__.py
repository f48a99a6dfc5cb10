"""The records for the centre and their sender."""
