import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiError } from '../http';

/**
 * A state change from the console: runs `fn`, then refreshes every query (the API's answer is
 * the truth) and says what happened (`done`, role="status") or why not (`error`, role="alert").
 * A refusal refreshes too: a 409 means the page was behind (someone else acted first).
 */
export function useAction<A, R>(fn: (arg: A) => Promise<R>, confirmation: (result: R, arg: A) => string) {
  const queryClient = useQueryClient();
  const [done, setDone] = useState('');
  const mutation = useMutation({
    mutationFn: fn,
    onMutate: () => setDone(''),
    onSuccess: async (result, arg) => {
      setDone(confirmation(result, arg));
      await queryClient.invalidateQueries();
    },
    onError: () => queryClient.invalidateQueries(),
  });
  const problems = mutation.error instanceof ApiError ? mutation.error.problems : [];
  return {
    run: mutation.mutate,
    busy: mutation.isPending,
    error: mutation.error,
    problems,
    done,
    reset: mutation.reset,
  };
}
