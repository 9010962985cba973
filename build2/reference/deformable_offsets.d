build2/reference/deformable_offsets.o: reference/deformable_offsets.c \
 reference/ref_internal.h reference/conform_ref.h
reference/ref_internal.h:
reference/conform_ref.h:
