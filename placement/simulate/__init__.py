"""What a rack or broker failure does to every partition, in process."""
