"""The filter language: text -> polars expression, and its inverse (a cell -> the term that keeps
it); whether one filter narrows another, and the rows and figures recent filters found.
"""
